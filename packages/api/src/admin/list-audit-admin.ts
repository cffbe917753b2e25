import { auditQuery } from "../openapi/requests.js";
import { AuditPage } from "../openapi/responses.js";
import { renderAuditPage } from "../audit/render.js";
import { eventsOf } from "../events/render.js";
import { defineRoute } from "../route.js";
import { OWNER } from "./owner.js";

/**
 * `GET /admin/audit?before=&limit=&target=&actor=` (docs/design/identity-and-abuse.md#audit-log):
 * every entry of the audit log — the owner's actions and the Council's, sealed ballots unsealed —
 * newest first, keyset-paged (1–100 a page, default 50), with the hashes `aps audit verify` checks.
 */
export const listAuditAdmin = defineRoute({
  method: "get",
  path: "/admin/audit",
  operationId: "listAuditAdmin",
  tag: "admin",
  summary: "Every audit entry, newest first",
  description: [
    'Every entry of the audit log, the owner\'s actions (`visibility: "private"`: seats, keys,',
    'suspensions, hides, dead-letter replays) and the Council\'s (`"public"`), newest first, with',
    "sealed ballots shown as cast. Same shape, query and paging as [`GET /audit`](/docs/endpoints.md#get-audit); each",
    "entry's `hash` is sha256 of its `prevHash` followed by the canonical JSON of the entry",
    "([design](/docs/council.md#the-audit-log)). Statuses: 200; 400; **401**; 404 (admin routes",
    "disabled); 503.",
  ].join("\n"),
  access: "owner",
  query: auditQuery,
  ok: { status: 200, description: "a page of audit entries", schema: AuditPage },
  codes: [...OWNER, "invalid_request", "upstream_unavailable"],
  async handle({ query: q }, { notifications }) {
    const page = await eventsOf(notifications).listAudit({
      includePrivate: true,
      before: q.before ?? "",
      limit: q.limit,
      target: q.target ?? "",
      actor: q.actor ?? "",
    });
    return renderAuditPage(page, false);
  },
});
