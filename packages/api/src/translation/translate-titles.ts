import { titlesQuery } from "../openapi/requests.js";
import { TitleTranslations } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { KEYED } from "../shared.js";
import { callerFields, translationOf } from "./need.js";

/**
 * `GET /posts/translations?lang=&ids=a,b` (docs/design/search-and-translation.md#machine-translation, seed "Translation rules"): the
 * titles of up to 50 posts in `lang`, ids not available in `missing`; `Content-Language`. Anonymous
 * callers read only the cache; keyed callers may generate within their key's, their source's and
 * the deployment's daily budgets (429, docs/design/identity-and-abuse.md#budgets-per-source); 503 without a translation service. Mounted
 * before the forum's `/posts/{id}` (app.ts), so `translations` is not taken for an id.
 */
export const translateTitles = defineRoute({
  method: "get",
  path: "/posts/translations",
  operationId: "translateTitles",
  tag: "translation",
  summary: "Titles of up to 50 posts in a language",
  access: "optional",
  query: titlesQuery,
  ok: {
    status: 200,
    description: "the titles; ids not available are in `missing`",
    schema: TitleTranslations,
    headers: ["Content-Language"],
  },
  codes: [...KEYED, "quota_exceeded", "unsupported_language_pair"],
  async handle({ query: q, req, res }, { translation }) {
    const out = await translationOf(translation).translateTitles({
      postIds: q.ids,
      lang: q.lang,
      ...callerFields(req, res),
    });
    res.setHeader("Content-Language", q.lang);
    return {
      lang: q.lang,
      items: out.items.map((i) => ({
        id: i.id,
        title: i.title,
        sourceLang: i.sourceLang,
        engine: i.engine || null,
        machineTranslation: i.machineTranslation,
      })),
      missing: out.missing,
    };
  },
});
