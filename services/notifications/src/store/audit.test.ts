import { fileURLToPath } from "node:url";
import { createLogger, migrate, openDatabase, PLATFORM_MIGRATIONS_DIR, type Database } from "@aps/platform";
import { ADMIN_DATABASE_URL, createTestDatabase, hasPostgres, type TestDatabase } from "@aps/testkit";
import { AuditStore, type AuditInput } from "./audit.js";

/**
 * The audit log's chain on the real PostgreSQL (docs/design/identity-and-abuse.md#audit-log):
 * appends link each entry to the one before, concurrent appends keep one chain without a gap, a
 * redelivered source appends nothing, the table refuses UPDATE and DELETE, and a row changed,
 * removed or swapped behind the trigger's back (as the superuser, triggers off) makes verify fail
 * at that sequence number.
 */
const log = createLogger("notifications-audit-test", "silent");
const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));
const pgUp = await hasPostgres();
if (!pgUp)
  console.warn(`\n!! audit.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — the real-PostgreSQL suite is SKIPPED.\n`);

(pgUp ? describe : describe.skip)("the audit log's chain (real PostgreSQL; SKIPPED when none is reachable)", () => {
  let tdb: TestDatabase;
  let db: Database;
  let audit: AuditStore;
  let n = 0;
  beforeEach(async () => {
    tdb = await createTestDatabase();
    db = await openDatabase({ url: tdb.url, schema: "notifications", log, poolSize: 8 });
    await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log);
    audit = new AuditStore(db.pool);
  });
  afterEach(async () => {
    await db?.close();
    await tdb?.drop();
  });

  const entry = (over: Partial<AuditInput> = {}): AuditInput => ({
    sourceId: `ev_${++n}`,
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
    actor: "owner",
    action: "agent.suspended",
    targetType: "agent",
    targetId: `ag_${n}`,
    before: { suspended: false, suspendedReason: null },
    after: { suspended: true, suspendedReason: "spam" },
    reason: "spam",
    visibility: "private",
    sealed: false,
    ...over,
  });
  /** Runs `sql` as the superuser with triggers off: what the trigger cannot stop. */
  const behindTheTrigger = async (sql: string, args: unknown[] = []) => {
    const c = await db.pool.connect();
    try {
      await c.query("SET session_replication_role = replica");
      await c.query(sql, args);
    } finally {
      await c.query("RESET session_replication_role");
      c.release();
    }
  };

  it("links each entry to the one before and lists newest first, public ones alone when asked", async () => {
    expect(await audit.append(entry())).toEqual({ seq: "1", appended: true });
    expect(await audit.append(entry({ actor: "ag_c", action: "ballot.cast", visibility: "public" }))).toEqual({
      seq: "2",
      appended: true,
    });
    await audit.append(entry());
    const all = await audit.list({ includePrivate: true, before: 0n, limit: 2, target: "", actor: "" });
    expect(all.items.map((e) => e.seq)).toEqual(["3", "2"]);
    expect(all.next).toBe("2");
    expect(all.items[0]!.prevHash).toBe(all.items[1]!.hash);
    const rest = await audit.list({ includePrivate: true, before: 2n, limit: 2, target: "", actor: "" });
    expect(rest.items.map((e) => e.seq)).toEqual(["1"]);
    expect(rest.next).toBe("");
    expect(rest.items[0]!.prevHash).toBe("0".repeat(64));
    const pub = await audit.list({ includePrivate: false, before: 0n, limit: 10, target: "", actor: "" });
    expect(pub.items.map((e) => [e.seq, e.actor])).toEqual([["2", "ag_c"]]);
    expect(
      (await audit.list({ includePrivate: true, before: 0n, limit: 10, target: "ag_1", actor: "" })).items,
    ).toHaveLength(1);
    expect(await audit.verify()).toEqual({ entries: 3 });
  });

  it("appends a redelivered source once", async () => {
    const e = entry();
    await audit.append(e);
    expect(await audit.append(e)).toEqual({ seq: "1", appended: false });
    expect(await audit.verify()).toEqual({ entries: 1 });
  });

  it("keeps one chain without a gap under concurrent appends", async () => {
    const r = await Promise.all(Array.from({ length: 24 }, () => audit.append(entry())));
    expect(r.map((x) => Number(x.seq)).sort((a, b) => a - b)).toEqual(Array.from({ length: 24 }, (_, i) => i + 1));
    expect(await audit.verify()).toEqual({ entries: 24 });
  });

  it("refuses UPDATE, DELETE and TRUNCATE of the log", async () => {
    await audit.append(entry());
    await expect(db.pool.query("UPDATE audit_log SET actor = 'ag_x'")).rejects.toThrow(/append-only/);
    await expect(db.pool.query("DELETE FROM audit_log")).rejects.toThrow(/append-only/);
    await expect(db.pool.query("TRUNCATE audit_log")).rejects.toThrow(/append-only/);
    expect(await audit.verify()).toEqual({ entries: 1 });
  });

  it("fails verify at a changed row", async () => {
    for (let i = 0; i < 5; i++) await audit.append(entry());
    await behindTheTrigger("UPDATE audit_log SET reason = 'nothing happened' WHERE seq = 3");
    expect((await audit.verify()).firstBad).toEqual({ seq: "3", problem: "its hash does not match its fields" });
  });

  it("fails verify at a removed row", async () => {
    for (let i = 0; i < 5; i++) await audit.append(entry());
    await behindTheTrigger("DELETE FROM audit_log WHERE seq = 2");
    expect((await audit.verify()).firstBad).toMatchObject({ seq: "2", problem: expect.stringMatching(/missing/) });
  });

  it("fails verify at swapped rows and at a removed tail", async () => {
    for (let i = 0; i < 5; i++) await audit.append(entry());
    // swap 2 and 3 (each renumbered as the other): the chain no longer links
    await behindTheTrigger("UPDATE audit_log SET seq = -seq WHERE seq IN (2, 3)");
    await behindTheTrigger("UPDATE audit_log SET seq = CASE seq WHEN -2 THEN 3 ELSE 2 END WHERE seq < 0");
    expect((await audit.verify()).firstBad?.seq).toBe("2");
    await behindTheTrigger("UPDATE audit_log SET seq = CASE seq WHEN 2 THEN -3 ELSE -2 END WHERE seq IN (2, 3)");
    await behindTheTrigger("UPDATE audit_log SET seq = -seq WHERE seq < 0");
    expect(await audit.verify()).toEqual({ entries: 5 });
    await behindTheTrigger("DELETE FROM audit_log WHERE seq = 5");
    expect((await audit.verify()).firstBad).toMatchObject({ seq: "5", problem: expect.stringMatching(/chain head/) });
  });
});
