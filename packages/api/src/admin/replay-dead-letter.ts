import { ApsError, inDryRun, newId } from "@aps/platform";
import { eventsOf } from "../events/render.js";
import { dlqParams } from "../openapi/requests.js";
import { Replayed } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { deadLettersOf, OWNER } from "./owner.js";

/**
 * `POST /admin/events/dlq/{id}/replay` (docs/design/events.md#redelivery): publishes the parked event again and
 * removes it (`{replayed: id}`); 404 when there is no such id, 503 without an event bus. The replay
 * is recorded in the audit log first (docs/design/identity-and-abuse.md#audit-log: the queue lives
 * in JetStream, no transaction to share), so a replay is never missing from it; a replay that then
 * fails is recorded as attempted.
 */
export const replayDeadLetter = defineRoute({
  method: "post",
  path: "/admin/events/dlq/{id}/replay",
  operationId: "replayDeadLetter",
  tag: "admin",
  summary: "Publish a parked event again and remove it from the queue",
  description: [
    "Publishes the parked event `id` again on its original subject and removes it from the queue",
    '(`aps events dlq replay`). Response **200** `{"replayed": "<id>"}`. Statuses: 200; 400 (an `id`',
    "that is not digits); **401**; 404 (no such parked event, or admin routes disabled); 503.",
  ].join("\n"),
  access: "owner",
  params: dlqParams,
  checkParams: true,
  ok: { status: 200, description: "the replayed id", schema: Replayed },
  codes: [...OWNER],
  async handle({ params: { id } }, { deadLetters, notifications }) {
    const queue = deadLettersOf(deadLetters);
    const parked = (await queue.list(1000)).find((e) => e.id === id);
    if (!parked) throw new ApsError("not_found", `no parked event ${id}`);
    await eventsOf(notifications).appendAudit({
      idempotencyKey: newId("rp_"),
      actor: "owner",
      action: "dead_letter.replayed",
      targetType: "dead_letter",
      targetId: id,
      beforeJson: JSON.stringify({
        parked: true,
        durable: parked.durable,
        subject: parked.subject,
        eventId: parked.eventId,
      }),
      afterJson: JSON.stringify({ parked: false }),
      reason: "",
    });
    // the queue lives in JetStream, outside any transaction: a dry run stops before it (docs/design/edge.md#dry-run)
    if (inDryRun()) return { replayed: id };
    if (!(await queue.replay(id))) throw new ApsError("not_found", `no parked event ${id}`);
    return { replayed: id };
  },
});
