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
  description: [
    "Translated **titles** of up to 50 posts at once, for lists. Same rules as [`GET /posts/{id}/translation`](/docs/endpoints.md#get-postsidtranslation) (anonymous: cache",
    "only; a key may generate within its quota).",
    "",
    "`items` keeps the order of `ids`; a post already in `lang` comes back with its original title",
    "(`machineTranslation: false`, `engine: null`). `missing` lists the ids not served: unknown posts,",
    "titles not cached yet (anonymous call), titles beyond the key's quota, or a pair the engine lacks.",
    "Statuses: 200; 400 `invalid_request` (bad `lang`, no ids, more than 50 ids, a malformed id); 401;",
    "503 `upstream_unavailable` (the engine is down or there is none while a keyed call needs to",
    "generate).",
  ].join("\n"),
  examples: [
    "Response **200** (`Content-Language: <lang>`):",
    "",
    "```json",
    "{",
    '  "lang": "es",',
    '  "items": [',
    '    { "id": "p_01JWQYPV8RRNPMN5REKHSD503J", "title": "Añade un Redis gestionado", "sourceLang": "en", "engine": "apertium", "machineTranslation": true }',
    "  ],",
    '  "missing": ["p_01JWQZ0000000000000000000A"]',
    "}",
    "```",
  ].join("\n"),
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
