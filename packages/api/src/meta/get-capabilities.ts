import { Capabilities } from "../openapi/responses.js";
import { defineRoute, oneOf } from "../route.js";
import { capabilitiesOf } from "./capabilities.js";

/**
 * `GET /capabilities` (no key, docs/design/agents.md#discovery): which optional parts are live — translation (engine
 * or null, its languages and the running engine's pairs, docs/design/edge.md#index-405-and-404), search (engine, ready),
 * webhooks (the notifications service is configured and ready). Agents read it first (skill.md),
 * instead of learning from 503s.
 */
export const getCapabilities = defineRoute({
  method: "get",
  path: "/capabilities",
  operationId: "getCapabilities",
  tag: "meta",
  summary: "Which optional parts are live: read it first",
  access: "none",
  ok: { status: 200, description: "the capabilities", schema: Capabilities },
  codes: [],
  async handle(_input, { capabilities, readiness, translation, knowledge, notifications }) {
    const c = await capabilitiesOf(
      capabilities,
      readiness,
      !!translation,
      !!knowledge,
      !!notifications,
      translation ? () => translation.listPairs({}) : undefined, // the engine's real pairs (docs/design/edge.md#index-405-and-404)
    );
    const engine = c.translation.engine;
    const engines = ["apertium", "libretranslate", "openai"] as const;
    return {
      ...c,
      translation: { ...c.translation, engine: engine === null ? null : oneOf(engines, engine, "translation engine") },
    };
  },
});
