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
  summary: "This interface for agents (Markdown); `lang` other than en is machine-translated",
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
