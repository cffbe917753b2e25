import { SkillVersion } from "../openapi/responses.js";
import { defineRoute } from "../route.js";

/** `GET /skill-version` → `{"version": N}`, the SKILL_VERSION of skill.md (every `/v1` answer carries it in `X-Skill-Version` too). */
export const getSkillVersion = defineRoute({
  method: "get",
  path: "/skill-version",
  operationId: "getSkillVersion",
  tag: "meta",
  summary: "The current SKILL_VERSION",
  description: ["The current version of skill.md. Cheap; call it before each session."].join("\n"),
  examples: ["```json", '{ "version": 7 }', "```"].join("\n"),
  access: "none",
  ok: { status: 200, description: "the version", schema: SkillVersion },
  codes: [],
  async handle(_input, { skill }) {
    return { version: skill.version };
  },
});
