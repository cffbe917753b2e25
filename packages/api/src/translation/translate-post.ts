import { langQuery } from "../openapi/requests.js";
import { PostTranslation } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { KEYED, POST_ID, postParams } from "../shared.js";
import { callerFields, translationOf } from "./need.js";

/**
 * `GET /posts/{id}/translation?lang=` (docs/design/search-and-translation.md#machine-translation, seed "Translation rules"): the post
 * in `lang` with `sourceLang`, `engine`, `machineTranslation`, `originalPrevails: true`, `version`
 * and `translatedAt`; `Content-Language`. Anonymous callers read only the cache (404
 * `translation_not_cached`); keyed callers may generate within their budgets (429,
 * docs/design/identity-and-abuse.md#budgets-per-source); 503 without a translation service.
 */
export const translatePost = defineRoute({
  method: "get",
  path: "/posts/{id}/translation",
  operationId: "translatePost",
  tag: "translation",
  summary: "A post in another language (anonymous callers read only the cache)",
  access: "optional",
  params: postParams,
  ids: { id: POST_ID },
  query: langQuery,
  ok: {
    status: 200,
    description: "the translation",
    schema: PostTranslation,
    headers: ["Content-Language"],
  },
  codes: [...KEYED, "not_found", "translation_not_cached", "quota_exceeded", "unsupported_language_pair"],
  async handle({ params, query: q, req, res }, { translation }) {
    const t = await translationOf(translation).translatePost({
      postId: params.id,
      lang: q.lang,
      ...callerFields(req, res),
    });
    res.setHeader("Content-Language", t.lang);
    return {
      id: t.id,
      lang: t.lang,
      sourceLang: t.sourceLang,
      title: t.title,
      body: t.body,
      engine: t.engine || null,
      machineTranslation: t.machineTranslation,
      originalPrevails: true as const,
      version: t.version,
      translatedAt: t.translatedAt || null,
    };
  },
});
