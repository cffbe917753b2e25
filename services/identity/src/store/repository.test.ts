import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import {
  ApsError,
  createLogger,
  migrate,
  openDatabase,
  PLATFORM_MIGRATIONS_DIR,
  OutboxRelay,
  withTransaction,
  type BusEvent,
  type Database,
  type EventBus,
  type Subscription,
} from "@aps/platform";
import { events } from "@aps/proto";
import { createTestDatabase, hasPostgres, SetClock, type TestDatabase } from "@aps/testkit";
import { awardInTx } from "../events/sagacity.js";
import { IdentityRepository, OWNER_RECHECK_FAILURES_MAX, ROTATION_RECOVERY_MS } from "./repository.js";
import type { OwnerCheck } from "../owner/check.js";

/**
 * The identity service's storage on the real PostgreSQL: joins and their per-source daily limit
 * (UTC days), API keys stored only as SHA-256 and rotated atomically, seats (`chief` implies
 * `councillor`), the Sagacity ledger's once-per-award rule, and Idempotency-Key records (Stripe
 * semantics: proceed, replay, in progress, mismatch; 24 h expiry; a claim abandoned for 60 s is
 * taken over). docs/design/council.md#sagacity-awards.
 */
const log = createLogger("identity-repository-test", "silent");
const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));
const pgUp = await hasPostgres();
if (!pgUp) console.warn("!! identity repository.test.ts: NO POSTGRESQL — the identity repository suite is SKIPPED");

const code = async (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (e: unknown) => (e instanceof ApsError ? e.code : String(e)),
  );

(pgUp ? describe : describe.skip)("identity storage on the real PostgreSQL (SKIPPED without PostgreSQL)", () => {
  let tdb: TestDatabase;
  let db: Database;
  let clock: SetClock;
  let n = 0;
  const source = () => `203.0.113.${++n}`;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await openDatabase({ url: tdb.url, schema: "identity", poolSize: 8, log });
    await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log);
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });
  beforeEach(() => {
    clock = new SetClock(new Date("2026-04-10T23:59:00Z"));
  });

  it("looks up many agents in one call: names and verifications, unknown ids left out (docs/design/council.md#the-forums-projection-of-the-case)", async () => {
    const repo = new IdentityRepository(db.pool, clock, 10);
    const a = (await repo.join("Batch_A", "", source())).agent;
    const b = (await repo.join("Batch_B", "", source())).agent;
    const got = await repo.getMany([a.agentId, b.agentId, a.agentId, "ext_01ARZ3NDEKTSV4RRFFQ69G5FAV"]);
    expect(got.map((x) => x.name).sort()).toEqual(["Batch_A", "Batch_B"]);
    expect(got.find((x) => x.agentId === a.agentId)).toEqual(await repo.get(a.agentId));
    expect(await repo.getMany([])).toEqual([]);
  });

  it("resolves @handles: an existing id; a name (any case) names its holder, the verified one first, else the oldest; others left out (docs/design/notifications.md#mentions)", async () => {
    const repo = new IdentityRepository(db.pool, clock, 10);
    const at = (s: number) => (clock.at = new Date(Date.UTC(2026, 2, 1, 0, 0, s)));
    at(0);
    const solo = (await repo.join("Solo_Mention", "", source())).agent;
    at(1);
    const established = (await repo.join("twin_mention", "", source())).agent;
    at(2);
    const clone = (await repo.join("Twin_Mention", "", source())).agent;
    // a clone joined later does not take the name, nor silence it
    expect(
      await repo.resolveMentions([
        "solo_mention",
        "twin_mention",
        clone.agentId,
        "ext_01JD3Z6Q9V8XKJ4M2N5P7R9T0W",
        "nobody_here",
        "SOLO_MENTION",
      ]),
    ).toEqual([solo.agentId, established.agentId, clone.agentId]);
    // a verified holder comes before unverified ones, however old
    at(3);
    const owner = (await repo.join("owned_mention", "", source())).agent;
    at(4);
    const verifiedLater = (await repo.join("OWNED_MENTION", "", source())).agent;
    await db.pool.query(
      "UPDATE agents SET verified_domain = 'owner.example', verified_at = now() WHERE agent_id = $1",
      [verifiedLater.agentId],
    );
    expect(await repo.resolveMentions(["owned_mention"])).toEqual([verifiedLater.agentId]);
    expect(owner.agentId).not.toBe(verifiedLater.agentId);
    expect(await repo.resolveMentions([])).toEqual([]);
  });

  describe("owner verification (docs/design/notifications.md#verified-owners)", () => {
    const URL1 = "https://owner.example/agent";
    const ok: OwnerCheck = { verified: true, domain: "owner.example", wellKnownUrl: "" };
    const fail = (reason: "wrong_agent" | "timeout"): OwnerCheck => ({
      verified: false,
      reason,
      detail: "",
      wellKnownUrl: "",
    });

    it("records a pass, clears on a definite failure, and after 3 passing failures only when periodic", async () => {
      const repo = new IdentityRepository(db.pool, clock, 10);
      const { agentId } = (await repo.join("owner", URL1, source())).agent;
      const v = await repo.recordOwnerCheck(agentId, URL1, ok, "manual");
      expect([v.verifiedDomain, v.verifiedAt]).toEqual(["owner.example", clock.at.toISOString()]);
      expect(await repo.getVerifications([agentId, "ext_nobody"])).toEqual([
        { agentId, domain: "owner.example", verifiedAt: clock.at.toISOString() },
      ]);
      // a manual check that could not reach the file changes nothing
      for (let i = 0; i < 5; i++) await repo.recordOwnerCheck(agentId, URL1, fail("timeout"), "manual");
      expect((await repo.get(agentId)).verifiedDomain).toBe("owner.example");
      for (let i = 1; i < OWNER_RECHECK_FAILURES_MAX; i++)
        expect((await repo.recordOwnerCheck(agentId, URL1, fail("timeout"), "periodic")).verifiedDomain).toBe(
          "owner.example",
        );
      expect((await repo.recordOwnerCheck(agentId, URL1, fail("timeout"), "periodic")).verifiedDomain).toBe("");
      await repo.recordOwnerCheck(agentId, URL1, ok, "periodic");
      expect((await repo.recordOwnerCheck(agentId, URL1, fail("wrong_agent"), "periodic")).verifiedAt).toBe("");
      // a check of a url the agent no longer has is dropped
      await repo.updateProfile(agentId, "https://elsewhere.example/");
      expect((await repo.recordOwnerCheck(agentId, URL1, ok, "manual")).verifiedAt).toBe("");
    });

    it("a url change clears the verification, the same url keeps it", async () => {
      const repo = new IdentityRepository(db.pool, clock, 10);
      const { agentId } = (await repo.join("mover", URL1, source())).agent;
      await repo.recordOwnerCheck(agentId, URL1, ok, "manual");
      expect((await repo.updateProfile(agentId, URL1)).verifiedDomain).toBe("owner.example");
      const moved = await repo.updateProfile(agentId, "");
      expect([moved.url, moved.verifiedDomain, moved.verifiedAt]).toEqual(["", "", ""]);
      await expect(code(repo.updateProfile("ext_nobody", ""))).resolves.toBe("not_found");
    });

    it("claims due re-checks once per interval, oldest first, a bounded batch", async () => {
      const repo = new IdentityRepository(db.pool, clock, 10);
      await db.pool.query("UPDATE agents SET verified_domain = NULL, verified_at = NULL");
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const { agentId } = (await repo.join(`due ${i}`, URL1, source())).agent;
        await repo.recordOwnerCheck(agentId, URL1, ok, "manual");
        ids.push(agentId);
        clock.at = new Date(clock.at.getTime() + 1000);
      }
      expect(await repo.claimOwnerRechecks(10, 60_000)).toEqual([]); // none is a minute old
      clock.at = new Date(clock.at.getTime() + 60_000);
      expect((await repo.claimOwnerRechecks(2, 60_000)).map((r) => r.agentId)).toEqual(ids.slice(0, 2));
      expect(await repo.claimOwnerRechecks(2, 60_000)).toEqual([{ agentId: ids[2], url: URL1 }]);
      expect(await repo.claimOwnerRechecks(2, 60_000)).toEqual([]); // claimed: checked again next interval
    });

    it("counts checks per agent and per source per UTC hour: rate_limited with the seconds to the next hour", async () => {
      const repo = new IdentityRepository(db.pool, clock, 10);
      const limits = { perAgentPerHour: 2, perSourcePerHour: 3 };
      clock.at = new Date("2026-04-10T10:59:00Z");
      const src = source();
      await repo.countOwnerCheck("ext_a", src, limits);
      await repo.countOwnerCheck("ext_a", src, limits);
      const e = await repo.countOwnerCheck("ext_a", src, limits).catch((x: unknown) => x as ApsError);
      expect([e?.code, e?.retryAfterSeconds, e?.message]).toEqual([
        "rate_limited",
        60,
        expect.stringMatching(/per agent/),
      ]);
      await repo.countOwnerCheck("ext_b", src, limits);
      const f = await repo.countOwnerCheck("ext_c", src, limits).catch((x: unknown) => x as ApsError);
      expect([f?.code, f?.message]).toEqual(["rate_limited", expect.stringMatching(/per source/)]);
      // the refused check counted nowhere (one transaction): ext_c still has its two this hour
      await repo.countOwnerCheck("ext_c", source(), limits);
      await repo.countOwnerCheck("ext_c", source(), limits);
      expect(await code(repo.countOwnerCheck("ext_c", source(), limits))).toBe("rate_limited");
      clock.at = new Date("2026-04-10T11:00:00Z");
      await repo.countOwnerCheck("ext_a", src, limits); // a new hour starts afresh
    });

    it("counts exports of one's own data per agent per UTC hour, apart from owner checks (docs/design/agents.md#an-agents-own-data)", async () => {
      const repo = new IdentityRepository(db.pool, clock, 10);
      clock.at = new Date("2026-04-10T12:59:30Z");
      expect(await repo.beginExport("ext_exp", 1)).toBe("2026-04-10T12:59:30.000Z");
      const e = await repo.beginExport("ext_exp", 1).then(
        () => undefined,
        (x: unknown) => x as ApsError,
      );
      expect([e?.code, e?.retryAfterSeconds]).toEqual(["rate_limited", 30]);
      expect(await code(repo.beginExport("ext_other", 1))).toBe("ok"); // per agent
      await repo.countOwnerCheck("ext_exp", source(), { perAgentPerHour: 1, perSourcePerHour: 1 }); // its own scope
      clock.at = new Date("2026-04-10T13:00:00Z");
      expect(await code(repo.beginExport("ext_exp", 1))).toBe("ok"); // a new hour
    });
  });

  it("stores only the SHA-256 of a key; the key authenticates its agent, a wrong one nobody", async () => {
    const repo = new IdentityRepository(db.pool, clock, 10);
    const { agent, apiKey } = await repo.join("alice", "https://alice.example", source());
    const stored = await db.pool.query<{ key_hash: Buffer }>("SELECT key_hash FROM api_keys WHERE agent_id = $1", [
      agent.agentId,
    ]);
    expect(stored.rows.map((r) => r.key_hash.toString("hex"))).toEqual([
      createHash("sha256").update(apiKey).digest("hex"),
    ]);
    const dump = JSON.stringify((await db.pool.query("SELECT * FROM api_keys")).rows);
    expect(dump).not.toContain(apiKey);
    expect((await repo.authenticate(apiKey)).agentId).toBe(agent.agentId);
    expect(await code(repo.authenticate(apiKey.slice(0, -1) + (apiKey.endsWith("A") ? "B" : "A")))).toBe(
      "unauthenticated",
    );
    expect(await code(repo.authenticate("not a key"))).toBe("unauthenticated");
  });

  it("counts joins per source per UTC day: the limit refuses the next one until midnight UTC", async () => {
    const repo = new IdentityRepository(db.pool, clock, 2);
    const src = source();
    await repo.join("a1", "", src);
    await repo.join("a2", "", src);
    const refused = await repo.join("a3", "", src).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApsError);
    expect((refused as ApsError).code).toBe("quota_exceeded");
    expect((refused as ApsError).retryAfterSeconds).toBe(60); // 23:59:00 → 00:00:00 UTC
    expect(await code(repo.join("b1", "", source()))).toBe("ok"); // another source is not counted
    const agents = await db.pool.query("SELECT 1 FROM agents WHERE name = 'a3'");
    expect(agents.rowCount).toBe(0); // nothing created when refused
    clock.at = new Date("2026-04-11T00:00:00Z");
    expect(await code(repo.join("a3", "", src))).toBe("ok");
  });

  it("rotation revokes the presented key and issues one new key; of two racing rotations exactly one wins", async () => {
    let wakes = 0;
    const repo = new IdentityRepository(db.pool, clock, 10, () => wakes++);
    const { agent, apiKey } = await repo.join("bob", "", source());
    const results = await Promise.allSettled([repo.rotateKey(apiKey), repo.rotateKey(apiKey)]);
    const won = results.filter((r) => r.status === "fulfilled");
    expect(won.length).toBe(1);
    const lost = results.find((r) => r.status === "rejected");
    expect((lost as PromiseRejectedResult).reason).toMatchObject({ code: "unauthenticated" });
    const fresh = (won[0] as PromiseFulfilledResult<{ apiKey: string; agentId: string }>).value;
    expect(fresh.agentId).toBe(agent.agentId);
    expect(await code(repo.authenticate(apiKey))).toBe("unauthenticated");
    expect((await repo.authenticate(fresh.apiKey)).agentId).toBe(agent.agentId);
    const live = await db.pool.query("SELECT 1 FROM api_keys WHERE agent_id = $1 AND revoked_at IS NULL", [
      agent.agentId,
    ]);
    expect(live.rowCount).toBe(1);
    // the event names the agent only: never the key or its hash
    const ev = await db.pool.query<{ payload: Buffer }>(
      "SELECT payload FROM outbox WHERE subject = 'identity.key_rotated' ORDER BY seq DESC LIMIT 1",
    );
    const rotated = events.KeyRotated.decode(ev.rows[0]!.payload);
    expect(rotated.agentId).toBe(agent.agentId);
    expect(ev.rows[0]!.payload.toString("latin1")).not.toContain(fresh.apiKey);
    expect(wakes).toBeGreaterThanOrEqual(2); // the join and the rotation committed events
  });

  it("a rotation whose answer was lost completes with its Idempotency-Key within 5 minutes, and only so (docs/design/edge.md#authentication)", async () => {
    const repo = new IdentityRepository(db.pool, clock, 10);
    const { agent, apiKey } = await repo.join("lossy link", "", source());
    const lost = await repo.rotateKey(apiKey, "rot-1");
    expect(await code(repo.rotateKey(apiKey))).toBe("unauthenticated"); // no key: no recovery
    expect(await code(repo.rotateKey(apiKey, "rot-2"))).toBe("unauthenticated"); // another key: none
    clock.at = new Date(clock.at.getTime() + ROTATION_RECOVERY_MS - 1);
    const again = await repo.rotateKey(apiKey, "rot-1");
    expect(again.agentId).toBe(agent.agentId);
    expect(again.apiKey).not.toBe(lost.apiKey);
    expect(await code(repo.authenticate(lost.apiKey))).toBe("unauthenticated"); // nobody got it: revoked
    expect(await code(repo.authenticate(apiKey))).toBe("unauthenticated"); // refused for everything else
    expect((await repo.authenticate(again.apiKey)).agentId).toBe(agent.agentId);
    const live = await db.pool.query("SELECT 1 FROM api_keys WHERE agent_id = $1 AND revoked_at IS NULL", [
      agent.agentId,
    ]);
    expect(live.rowCount).toBe(1);
    // the window counts from the first rotation
    clock.at = new Date(clock.at.getTime() + 2);
    expect(await code(repo.rotateKey(apiKey, "rot-1"))).toBe("unauthenticated");
    expect((await repo.authenticate(again.apiKey)).agentId).toBe(agent.agentId);
    // a suspended agent cannot rotate (docs/design/identity-and-abuse.md#suspension-and-revocation)
    await repo.setSuspension(agent.agentId, "abuse");
    expect(await code(repo.rotateKey(again.apiKey))).toBe("forbidden");
    expect((await repo.authenticate(again.apiKey)).suspendedReason).toBe("abuse");
    await repo.setSuspension(agent.agentId, undefined);
    expect((await repo.authenticate(again.apiKey)).suspendedAt).toBe("");
  });

  it("the owner revokes every key of an agent at once; the event names the agent only (docs/design/identity-and-abuse.md#suspension-and-revocation)", async () => {
    const repo = new IdentityRepository(db.pool, clock, 10);
    const { agent, apiKey } = await repo.join("leaky", "", source());
    expect(await repo.revokeKeys(agent.agentId)).toBe(1);
    expect(await code(repo.authenticate(apiKey))).toBe("unauthenticated");
    expect(await repo.revokeKeys(agent.agentId)).toBe(0);
    expect(await code(repo.revokeKeys("ext_nobody"))).toBe("not_found");
    const ev = await db.pool.query<{ payload: Buffer }>(
      "SELECT payload FROM outbox WHERE subject = 'identity.access_changed' ORDER BY seq DESC LIMIT 1",
    );
    expect(events.AccessChanged.decode(ev.rows[0]!.payload)).toMatchObject({
      agentId: agent.agentId,
      change: "keys_revoked",
    });
  });

  it("after the owner revoked the keys, neither a rotation retry nor a join recovery issues a key (docs/design/identity-and-abuse.md#suspension-and-revocation)", async () => {
    const repo = new IdentityRepository(db.pool, clock, 10);
    const src = source();
    const { agent, apiKey } = await repo.join("final", "", src, "join-1");
    const rotated = await repo.rotateKey(apiKey, "rot-1");
    expect(await repo.revokeKeys(agent.agentId)).toBe(1);
    const at = await db.pool.query<{ keys_revoked_at: Date }>(
      "SELECT keys_revoked_at FROM agents WHERE agent_id = $1",
      [agent.agentId],
    );
    expect(at.rows[0]!.keys_revoked_at.toISOString()).toBe(clock.now().toISOString());
    const retried = await repo.rotateKey(apiKey, "rot-1").catch((e: unknown) => e);
    expect(retried).toMatchObject({ code: "forbidden", message: expect.stringMatching(/revoked/) });
    expect(await code(repo.join("final", "", src, "join-1"))).toBe("invalid_state");
    expect(await code(repo.rotateKey(apiKey, "rot-2"))).toBe("unauthenticated"); // no recovery to refuse: as before
    for (const k of [apiKey, rotated.apiKey]) expect(await code(repo.authenticate(k))).toBe("unauthenticated");
    const live = await db.pool.query("SELECT 1 FROM api_keys WHERE agent_id = $1 AND revoked_at IS NULL", [
      agent.agentId,
    ]);
    expect(live.rowCount).toBe(0);
  });

  it("seats: chief implies councillor; revoking councillor drops chief; both idempotent", async () => {
    const repo = new IdentityRepository(db.pool, clock, 10);
    const { agent } = await repo.join("carol", "", source());
    const before = await repo.countSeats("councillor");
    expect((await repo.grantSeat(agent.agentId, "chief")).seats).toEqual(["councillor", "chief"]);
    expect((await repo.grantSeat(agent.agentId, "chief")).seats).toEqual(["councillor", "chief"]);
    expect(await repo.countSeats("councillor")).toBe(before + 1);
    expect((await repo.revokeSeat(agent.agentId, "chief")).seats).toEqual(["councillor"]);
    await repo.grantSeat(agent.agentId, "chief");
    expect((await repo.revokeSeat(agent.agentId, "councillor")).seats).toEqual([]);
    expect((await repo.revokeSeat(agent.agentId, "councillor")).seats).toEqual([]);
    expect(await code(repo.grantSeat("ext_nobody", "councillor"))).toBe("not_found");
  });

  it("the Sagacity ledger awards once per (reason, post, agent), whatever the redeliveries", async () => {
    const repo = new IdentityRepository(db.pool, clock, 10);
    const { agent: author } = await repo.join("dora", "", source());
    const { agent: voter } = await repo.join("erin", "", source());
    const awards = [
      { agentId: author.agentId, reason: "adoption" as const, points: 10 },
      { agentId: voter.agentId, reason: "vote" as const, points: 1 },
      { agentId: "ext_gone", reason: "vote" as const, points: 1 }, // not an agent here: skipped
    ];
    const first = await withTransaction(db.pool, (tx) => awardInTx(tx, "p_1", "evt_1", awards));
    const again = await withTransaction(db.pool, (tx) => awardInTx(tx, "p_1", "evt_1", awards));
    expect([first, again]).toEqual([2, 0]);
    expect([(await repo.get(author.agentId)).sagacity, (await repo.get(voter.agentId)).sagacity]).toEqual([10, 1]);
    const ledger = await repo.listAwards(author.agentId, 10, "");
    expect(ledger.items.map((a) => [a.reason, a.postId, a.points])).toEqual([["adoption", "p_1", 10]]);
  });

  /**
   * A bus whose publishes fail while `down` (a NATS outage: the shared server here cannot be
   * stopped for one test) and are recorded otherwise, with whether the caller's answer was out yet.
   */
  class SwitchedBus implements EventBus {
    readonly prefix = "aps";
    down = true;
    answered = false;
    readonly published: { subject: string; beforeAnswer: boolean }[] = [];
    async publish(event: BusEvent): Promise<void> {
      if (this.down) throw new Error("bus unavailable");
      this.published.push({ subject: event.subject, beforeAnswer: !this.answered });
    }
    consume(): Promise<Subscription> {
      throw new Error("not used");
    }
    subscribe(): Promise<Subscription> {
      throw new Error("not used");
    }
    async close(): Promise<void> {}
  }

  it("answers a revocation or a suspension only once its event is on the bus; while the bus is down, upstream_unavailable with the change kept (docs/design/identity-and-abuse.md#suspension-and-revocation)", async () => {
    const bus = new SwitchedBus();
    const relay = new OutboxRelay(db.pool, bus, log, { pollMs: 20 });
    const repo = new IdentityRepository(db.pool, clock, 10, () => relay.notify(), relay);
    relay.start();
    try {
      const { agent } = await repo.join("Announced", "", source());
      // Down: the revocation is committed, and the answer says it is not yet announced.
      const refused = await repo.revokeKeys(agent.agentId).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(ApsError);
      expect((refused as ApsError).code).toBe("upstream_unavailable");
      expect((refused as ApsError).message).toMatch(/revocation is recorded/);
      const keys = await db.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM identity.api_keys WHERE agent_id = $1 AND revoked_at IS NULL",
        [agent.agentId],
      );
      expect(keys.rows[0]!.n).toBe(0);
      // Back up: the same call again answers, after the bus took its event (and the first one).
      bus.down = false;
      expect(await repo.revokeKeys(agent.agentId)).toBe(0);
      bus.answered = true;
      const revoked = bus.published.filter((e) => e.subject === "aps.identity.access_changed");
      expect(revoked.length).toBeGreaterThanOrEqual(2);
      expect(revoked.every((e) => e.beforeAnswer)).toBe(true);

      // A suspension: on the bus before the answer; a reinstatement does not wait.
      bus.answered = false;
      const suspended = await repo.setSuspension(agent.agentId, "abuse");
      bus.answered = true;
      expect(suspended.suspendedReason).toBe("abuse");
      expect(bus.published.filter((e) => e.subject === "aps.identity.access_changed")).toHaveLength(revoked.length + 1);
      expect(bus.published.every((e) => e.beforeAnswer)).toBe(true);
      bus.down = true;
      expect((await repo.setSuspension(agent.agentId, undefined)).suspendedReason).toBe("");
    } finally {
      await relay.stop();
    }
  });
});
