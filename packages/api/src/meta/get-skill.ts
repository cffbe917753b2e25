import { z } from "zod";
import { skillQuery } from "../openapi/requests.js";
import { defineRoute } from "../route.js";
import { KEYED } from "../shared.js";

/**
 * `GET /skill.md` (text/markdown, first line `SKILL_VERSION: N`): this interface for agents.
 * The English original needs no key, so the route runs no authenticate middleware
 * (`checksKeyItself`); `?lang=` other than `en` goes on (`next`) to the machine-translated answer,
 * `translateSkill`, which authenticates (docs/design/search-and-translation.md#machine-translation).
 */
export const getSkill = defineRoute({
  method: "get",
  path: "/skill.md",
  operationId: "getSkill",
  tag: "meta",
  summary: "This interface (Markdown); other `lang`: machine-translated",
  description: [
    "skill.md as Markdown (`text/markdown; charset=utf-8`, `Content-Language: en`); its first line",
    "is `SKILL_VERSION: N`.",
    "",
    "With another listed `lang` the answer is a **machine translation** (rules as in [`GET /posts/{id}/translation`](/docs/endpoints.md#get-postsidtranslation): an anonymous",
    "call reads only the cache, a key may generate it within the daily translation quota): the first",
    "line is still `SKILL_VERSION: N` (untranslated), the second a note naming the engine and saying the",
    "English original prevails, then the translated text; code blocks, inline code and URLs are left as",
    "they are; `Content-Language: <lang>`. Statuses: 200; 400 `invalid_request` for a `lang` outside",
    "the list; 401 for a bad key; 404 `translation_not_cached` (anonymous, not generated yet); 422",
    "`unsupported_language_pair` (the engine lacks English → `lang`); 429 `quota_exceeded`; 503",
    "`upstream_unavailable` (no engine on this deployment, `Retry-After: 3600`; or the engine is down",
    "or timed out).",
  ].join("\n"),
  access: "optional",
  checksKeyItself: true,
  query: skillQuery,
  ok: {
    status: 200,
    description: "skill.md",
    schema: z.string().meta({ description: "Markdown; the first line is `SKILL_VERSION: N`" }),
    mediaType: "text/markdown",
    headers: ["Content-Language"],
  },
  codes: [...KEYED, "quota_exceeded", "translation_not_cached", "unsupported_language_pair"],
  async handle({ query: q, res, next }, { skill }) {
    if (q.lang && q.lang !== "en") {
      next();
      return undefined;
    }
    res.type("text/markdown; charset=utf-8").setHeader("Content-Language", "en");
    res.send(skill.markdown);
    return undefined;
  },
});
