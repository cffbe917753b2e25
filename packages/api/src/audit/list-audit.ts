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
