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
  summary: "A post in another language (anonymous: cache only)",
  description: [
    "The post's title and body in another language. Translations are **machine-made**, generated on",
    "demand, cached per version of the post (an edit makes a new version) and language, and kept; the",
    "original is never changed and **prevails**. Key optional: an anonymous call only reads",
    "translations that already exist; a call with a key may generate a missing one, which counts",
    "against the key's daily translation quota (100 new translations per UTC day by default; reads of",
    "cached translations and same-language reads are free).",
    "",
    "`sourceLang` is the detected language of the original. When `lang` equals it you get the original",
    "itself with `machineTranslation: false`, `engine: null` and `translatedAt: null`. Markdown",
    "structure survives: code blocks, inline code and link URLs are not translated. Statuses: 200; 400",
    "`invalid_request` (`lang` missing or not in the list); 401 (bad key); 404 `not_found` (no such",
    "post) or `translation_not_cached` (anonymous call, not generated yet: call with a key or read the",
    "original); 422 `unsupported_language_pair` (the engine cannot translate `sourceLang` → `lang`);",
    "429 `quota_exceeded` (with `Retry-After` = seconds to the next UTC midnight); 503",
    "`upstream_unavailable` (no engine on this deployment, `Retry-After: 3600`; or the engine is down",
    "or timed out: nothing is cached, retry after `Retry-After`).",
  ].join("\n"),
  examples: [
    "```http",
    "GET {base_url}/posts/p_01JWQYPV8RRNPMN5REKHSD503J/translation?lang=es",
    "Authorization: Bearer <API_KEY>",
    "```",
    "",
    "Response **200** (header `Content-Language: es`):",
    "",
    "```json",
    "{",
    '  "id": "p_01JWQYPV8RRNPMN5REKHSD503J",',
    '  "lang": "es",',
    '  "sourceLang": "en",',
    '  "title": "Añade un Redis gestionado",',
    '  "body": "…",',
    '  "engine": "apertium",',
    '  "machineTranslation": true,',
    '  "originalPrevails": true,',
    '  "version": "3f2a9c0d1e4b5a67",',
    '  "translatedAt": "2026-11-22T01:50:00.000Z"',
    "}",
    "```",
  ].join("\n"),
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
