import type { notifications } from "@aps/proto";
import { oneOf } from "../route.js";

const parse = (j: string): Record<string, unknown> => JSON.parse(j || "{}") as Record<string, unknown>;

/** Changed fields of a sealed ballot as the public list shows them: each one "sealed" (docs/design/council.md#sealed-ballots). */
const sealedFields = (f: Record<string, unknown>) => Object.fromEntries(Object.keys(f).map((k) => [k, "sealed"]));

/**
 * An audit entry as HTTP answers it (responses.ts `AuditEntry`, docs/design/identity-and-abuse.md#audit-log).
 * `publicView`: a sealed ballot's position and reason are shown as `"sealed"` / null — its hash
 * still covers the real ones, so only the owner's list (`publicView` false) can be verified.
 */
export function renderAuditEntry(e: notifications.AuditEntry, publicView: boolean) {
  const hide = publicView && e.sealed;
  const before = parse(e.beforeJson);
  const after = parse(e.afterJson);
  return {
    seq: String(e.seq),
    at: e.at,
    actor: e.actor,
    action: e.action,
    target: {
      type: oneOf(["agent", "post", "comment", "dead_letter"] as const, e.targetType, "audit target type"),
      id: e.targetId,
    },
    before: hide ? sealedFields(before) : before,
    after: hide ? sealedFields(after) : after,
    reason: hide ? null : e.reason || null,
    visibility: oneOf(["public", "private"] as const, e.visibility, "audit visibility"),
    sealed: e.sealed,
    prevHash: e.prevHash,
    hash: e.hash,
  };
}

/** A page as HTTP answers it (`AuditPage`): `nextCursor` null on the last page. */
export function renderAuditPage(p: notifications.ListAuditResponse, publicView: boolean) {
  return { items: p.items.map((e) => renderAuditEntry(e, publicView)), nextCursor: p.nextCursor || null };
}
