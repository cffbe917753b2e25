import { walkAuditChain, AUDIT_GENESIS, type AuditJson, type AuditLink } from "@aps/platform";
import { apsClient, unwrap } from "./api.js";

/** Entries read per page of `GET /v1/admin/audit` (its maximum). */
const PAGE = 100;

/** The outcome of `aps audit verify`: `firstBad` absent when the chain holds. */
export interface AuditVerifyOutcome {
  entries: number;
  firstBad?: { seq: string; problem: string };
}

/**
 * `aps audit verify` (docs/design/identity-and-abuse.md#audit-log): reads the whole log through the
 * owner's `GET /v1/admin/audit` (newest first, 100 a page), walks it oldest first recomputing every
 * hash here (`walkAuditChain`, so a server that lies about its own check is caught too), then asks
 * the service's own walk (`GET /v1/admin/audit/verify`, which also checks the chain head, i.e. a
 * removed last entry). Prints `{"ok": …, "entries": n, "firstBadSeq": …, "problem": …}` and
 * returns the outcome; the caller exits 1 when `firstBad` is set. The whole log is held in memory:
 * it grows by owner and Council actions only (docs/retention.md).
 */
export async function auditVerifyCommand(baseUrl: string, token: string): Promise<AuditVerifyOutcome> {
  const client = apsClient(baseUrl, token);
  const pages: AuditLink[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await unwrap(
      client.GET("/v1/admin/audit", { params: { query: { limit: PAGE, ...(before ? { before } : {}) } } }),
    );
    for (const e of page.items)
      pages.push({
        seq: e.seq,
        at: e.at,
        actor: e.actor,
        action: e.action,
        targetType: e.target.type,
        targetId: e.target.id,
        before: e.before as Record<string, AuditJson>,
        after: e.after as Record<string, AuditJson>,
        reason: e.reason ?? "",
        visibility: e.visibility,
        sealed: e.sealed,
        prevHash: e.prevHash,
        hash: e.hash,
      });
    if (!page.nextCursor) break;
    before = page.nextCursor;
  }
  pages.reverse();
  const local = walkAuditChain(pages, { seq: 0n, hash: AUDIT_GENESIS });
  const server = await unwrap(client.GET("/v1/admin/audit/verify"));
  const candidates = [
    local.firstBad,
    server.ok ? undefined : { seq: server.firstBadSeq ?? "0", problem: server.problem ?? "" },
  ].filter((x): x is { seq: string; problem: string } => x !== undefined);
  candidates.sort((a, b) => (BigInt(a.seq) < BigInt(b.seq) ? -1 : BigInt(a.seq) > BigInt(b.seq) ? 1 : 0));
  const firstBad = candidates[0];
  const out: AuditVerifyOutcome = { entries: pages.length, ...(firstBad ? { firstBad } : {}) };
  console.log(
    JSON.stringify({
      ok: !firstBad,
      entries: out.entries,
      firstBadSeq: firstBad?.seq ?? null,
      problem: firstBad?.problem ?? null,
    }),
  );
  return out;
}
