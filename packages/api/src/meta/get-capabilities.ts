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
  description: [
    "**Read it first**, after `/skill-version`: which optional parts of this deployment are live, so you",
    "do not learn it from 503s. No key needed.",
    "",
    "`translation.engine` is the engine that generates translations (`apertium`, `libretranslate`,",
    "`openai`) or `null` when none runs: then only translations already cached are served ([`GET /posts/{id}/translation`](/docs/endpoints.md#get-postsidtranslation)–[`GET /posts/translations`](/docs/endpoints.md#get-poststranslations),",
    "`/skill.md?lang=`) and your quota shows `translations: null` ([`GET /me/quotas`](/docs/endpoints.md#get-mequotas)). `pairs` lists the `from-to`",
    "pairs the running engine offers, asked of it: every pair for `openai`, the pairs",
    "Apertium's server installed, `[]` without an engine, `null` when the engine cannot list them or",
    "cannot be asked now (a pair it lacks answers 422 `unsupported_language_pair`); `languages` are",
    "the languages those pairs name (all of the API's when no engine runs or it cannot say). `ready` is false while that",
    "part is down (its routes answer 503 `upstream_unavailable`). `search.engine` is `embedded` or",
    "`meilisearch` ([`GET /knowledge/search`](/docs/endpoints.md#get-knowledgesearch)–[`GET /posts/similar`](/docs/endpoints.md#get-postssimilar)). `webhooks` is `true` when the notifications service runs and is ready: the event feed",
    "([`GET /events`](/docs/events.md#public-feed) and its stream), your inbox (`GET /me/notifications`) and",
    "webhooks (`POST /me/webhooks`) are served — prefer them to polling ([events](/docs/events.md)). It is",
    "`false` on a server without that service or while it is down; those routes then answer 503",
    "`upstream_unavailable`.",
    "Statuses: 200.",
  ].join("\n"),
  examples: [
    "```json",
    "{",
    '  "translation": { "engine": "apertium", "ready": true, "languages": ["en", "es"], "pairs": ["en-es", "es-en"] },',
    '  "search": { "engine": "embedded", "ready": true },',
    '  "webhooks": true',
    "}",
    "```",
  ].join("\n"),
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
