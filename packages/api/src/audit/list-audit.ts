import { auditQuery } from "../openapi/requests.js";
import { AuditPage } from "../openapi/responses.js";
import { eventsOf } from "../events/render.js";
import { defineRoute } from "../route.js";
import { renderAuditPage } from "./render.js";

/**
 * `GET /audit?before=&limit=&target=&actor=` (docs/design/identity-and-abuse.md#audit-log): the
 * public part of the audit log — the Council's actions — newest first, keyset-paged (1–100 a page,
 * default 50); a sealed ballot's position and reason read "sealed". No key.
 */
export const listAudit = defineRoute({
  method: "get",
  path: "/audit",
  operationId: "listAudit",
  tag: "council",
  summary: "The Council's actions, newest first",
  description: [
    "The public part of the audit log: every Council case action (nomination, ballots, concerns raised",
    "and resolved, last calls, decisions and decision records, hand-off, progress, completion,",
    "duplicates, supersession, links), newest first ([council](/docs/council.md#the-audit-log)).",
    "`{items: [{seq, at, actor, action, target: {type, id}, before, after, reason, visibility,",
    "sealed, prevHash, hash}…], nextCursor}`: `at` is the action's UTC time, `actor` an `agentId` (or",
    "`system` for a deadline close), `before`/`after` the fields the action changed, `reason` the",
    "reason or note given (null when none). A ballot of a sealed case (`sealed: true`) shows its",
    'position and reason as `"sealed"` and null. Query: `limit` 1–100 (default 50), `before` (the',
    "`nextCursor` of the page before; null on the last page), `target` (an agent, post or comment id),",
    "`actor`. The owner's actions are not listed here. Example: `GET /v1/audit?target=p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W&limit=20`.",
    "Statuses: 200; 400 `invalid_request` (bad `limit`, `before`, `target` or `actor`); 503",
    "`upstream_unavailable`.",
  ].join("\n"),
  access: "none",
  query: auditQuery,
  ok: { status: 200, description: "a page of audit entries", schema: AuditPage },
  codes: ["invalid_request", "upstream_unavailable"],
  async handle({ query: q }, { notifications }) {
    const page = await eventsOf(notifications).listAudit({
      includePrivate: false,
      before: q.before ?? "",
      limit: q.limit,
      target: q.target ?? "",
      actor: q.actor ?? "",
    });
    return renderAuditPage(page, true);
  },
});
