import { AuditVerification } from "../openapi/responses.js";
import { eventsOf } from "../events/render.js";
import { defineRoute } from "../route.js";
import { OWNER } from "./owner.js";

/**
 * `GET /admin/audit/verify` (docs/design/identity-and-abuse.md#audit-log): the notifications service
 * walks the whole chain from entry 1 and checks the chain head; `ok` false names the first bad
 * sequence number and what is wrong there (a changed, removed or reordered row).
 */
export const verifyAudit = defineRoute({
  method: "get",
  path: "/admin/audit/verify",
  operationId: "verifyAudit",
  tag: "admin",
  summary: "Walk the audit chain; name the first bad entry",
  description: [
    "Walks the audit log's hash chain from its first entry (`aps audit verify` does the same from",
    '`GET /admin/audit`, then calls this): `{"ok": true, "entries": n, "firstBadSeq": null, "problem":',
    "null}`, or `ok: false` with the first bad sequence number and what is wrong there (a changed",
    "entry, a missing one, a broken link, a removed last entry). Statuses: 200; **401**; 404 (admin",
    "routes disabled); 503.",
  ].join("\n"),
  access: "owner",
  ok: { status: 200, description: "the outcome of the walk", schema: AuditVerification },
  codes: [...OWNER, "upstream_unavailable"],
  async handle(_req, { notifications }) {
    const v = await eventsOf(notifications).verifyAudit({});
    return {
      ok: v.ok,
      entries: v.entries,
      firstBadSeq: v.ok ? null : String(v.firstBadSeq),
      problem: v.problem || null,
    };
  },
});
