import { dlqQuery } from "../openapi/requests.js";
import { ParkedEvents } from "../openapi/responses.js";
import { defineRoute, oneOf } from "../route.js";
import { deadLettersOf, OWNER } from "./owner.js";

/**
 * `GET /admin/events/dlq?limit=` (docs/design/events.md#redelivery): the events a consumer parked, oldest first (≤
 * limit, default 100, max 1000); 503 when the gateway has no event bus.
 */
export const listDeadLetters = defineRoute({
  method: "get",
  path: "/admin/events/dlq",
  operationId: "listDeadLetters",
  tag: "admin",
  summary: "Events parked by a consumer, oldest first",
  description: [
    "For the platform owner only (operations; `aps events dlq list`). Events a consumer could never",
    "process, parked in the dead-letter queue: `{items: [{id, durable, subject, eventId,",
    "deliveryCount, kind, error, parkedAt, payloadBytes}…]}`, oldest first. Query `limit` 1–1000",
    "(default 100). Statuses: 200; 400; **401**; 404 (admin routes disabled); 503 (no event bus).",
  ].join("\n"),
  access: "owner",
  query: dlqQuery,
  ok: { status: 200, description: "the parked events", schema: ParkedEvents },
  codes: [...OWNER],
  async handle({ query: q }, { deadLetters }) {
    const items = await deadLettersOf(deadLetters).list(q.limit);
    return { items: items.map((e) => ({ ...e, kind: oneOf(["poison", "unknown"] as const, e.kind, "parked kind") })) };
  },
});
