import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { eventually, httpClient } from "@aps/testkit";
import { grantSeat, joinAgent, propose } from "../support/fixtures.js";
import { availableModes, ROOT, startSystem, type System } from "../support/system.js";

/**
 * The audit log (docs/design/identity-and-abuse.md#audit-log) end to end: an owner suspension and
 * a Council ballot are recorded with actor, time, target, before/after and reason; `GET /v1/audit`
 * shows only the public (Council) entries, with a sealed ballot's position as "sealed"; the owner's
 * `GET /v1/admin/audit` shows both; `aps audit verify` passes, and — on the real PostgreSQL, where
 * the test can reach the database — fails naming the entry changed behind the trigger's back.
 */
const run = promisify(execFile);
const CLI = join(ROOT, "services/cli/dist/main.js");
const modes = (await availableModes()).filter((m) => m === "embedded" || m === "real");

interface Entry {
  seq: string;
  at: string;
  actor: string;
  action: string;
  target: { type: string; id: string };
  before: Record<string, unknown>;
  after: Record<string, unknown>;
  reason: string | null;
  visibility: string;
  sealed: boolean;
}

describe.each(modes)("audit log (%s)", (mode) => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  beforeAll(async () => {
    sys = await startSystem(mode, {
      env: { JOINS_PER_SOURCE_PER_DAY: "1000", COUNCIL_DEADLINE: "7d", BALLOT_SEALING: "until_closed" },
    });
    req = httpClient(sys.baseUrl);
  });
  afterAll(async () => {
    await sys?.stop();
  });
  const admin = () => ({ key: sys.adminToken });
  const cli = (args: string[]) =>
    run(process.execPath, [CLI, ...args], {
      env: { ...process.env, APS_URL: sys.baseUrl, APS_ADMIN_TOKEN: sys.adminToken },
    });
  const entries = async (path: string, key?: string): Promise<Entry[]> => {
    const r = await req("GET", path, key ? { key } : {});
    expect(r.status).toBe(200);
    return r.body.items as Entry[];
  };

  it("records an owner suspension and a Council ballot; the public list shows only the Council's", async () => {
    const chief = await joinAgent(sys, "chief");
    const c1 = await joinAgent(sys, "councillor one");
    const c2 = await joinAgent(sys, "councillor two");
    await grantSeat(sys, chief, "chief");
    await grantSeat(sys, c1, "councillor");
    await grantSeat(sys, c2, "councillor");
    const author = await joinAgent(sys, "author");
    const spammer = await joinAgent(sys, "spammer");
    const id = await propose(author, { title: "Audit me" });

    const started = Date.now();
    expect(
      (await req("POST", `/admin/agents/${spammer.agentId}/suspend`, { ...admin(), body: { reason: "spam run" } }))
        .status,
    ).toBe(200);
    expect((await req("POST", `/posts/${id}/nominate`, { key: c1.apiKey })).status).toBe(200);
    expect(
      (await req("POST", `/posts/${id}/council`, { key: c2.apiKey, body: { vote: "reject", reason: "Too broad." } }))
        .status,
    ).toBe(200);
    expect(
      (
        await req("POST", `/posts/${id}/council`, {
          key: c2.apiKey,
          body: { vote: "abstain", reason: "On reflection." },
        })
      ).status,
    ).toBe(200);

    // the owner's list: both kinds, newest first
    let owners: Entry[] = [];
    await eventually(
      async () => {
        owners = await entries(`/admin/audit?limit=100`, sys.adminToken);
        expect(owners.filter((e) => e.target.id === id && e.action === "ballot.cast")).toHaveLength(3);
        expect(owners.some((e) => e.action === "agent.suspended")).toBe(true);
      },
      20_000,
      50,
    );
    const seqs = owners.map((e) => Number(e.seq));
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    const suspended = owners.find((e) => e.action === "agent.suspended")!;
    expect(suspended).toMatchObject({
      actor: "owner",
      target: { type: "agent", id: spammer.agentId },
      before: { suspended: false, suspendedReason: null },
      after: { suspended: true, suspendedReason: "spam run" },
      reason: "spam run",
      visibility: "private",
    });
    expect(Date.parse(suspended.at)).toBeGreaterThanOrEqual(started - 1000);
    expect(suspended.at).toMatch(/Z$/);
    expect(owners.find((e) => e.action === "seat.granted" && e.target.id === c1.agentId)).toMatchObject({
      actor: "owner",
      before: { councillor: false },
      after: { councillor: true },
    });
    const changed = owners.find(
      (e) => e.action === "ballot.cast" && e.actor === c2.agentId && e.after.vote === "abstain",
    )!;
    expect(changed).toMatchObject({
      target: { type: "post", id },
      before: { vote: "reject" },
      after: { vote: "abstain" },
      reason: "On reflection.",
      visibility: "public",
      sealed: true,
    });
    expect(owners.find((e) => e.action === "case.nominated")).toMatchObject({ actor: c1.agentId, target: { id } });

    // the public list: the Council's entries only, a sealed position shown as sealed; filters
    const pub = await entries(`/audit?target=${id}`);
    expect(pub.length).toBeGreaterThanOrEqual(4);
    expect(pub.every((e) => e.visibility === "public" && e.target.id === id)).toBe(true);
    expect(pub.find((e) => e.seq === changed.seq)).toMatchObject({
      actor: c2.agentId,
      before: { vote: "sealed" },
      after: { vote: "sealed" },
      reason: null,
    });
    expect(await entries(`/audit?actor=owner`)).toEqual([]);
    expect((await entries(`/audit?limit=100`)).some((e) => e.visibility === "private")).toBe(false);
    expect(
      (await entries(`/admin/audit?actor=${c2.agentId}`, sys.adminToken)).every((e) => e.actor === c2.agentId),
    ).toBe(true);

    // keyset pages: two at a time, newest first, no repeat
    const first = await req("GET", "/audit?limit=2");
    expect(first.body.items).toHaveLength(2);
    const next = await req("GET", `/audit?limit=2&before=${first.body.nextCursor}`);
    expect(Number(next.body.items[0].seq)).toBeLessThan(Number(first.body.items[1].seq));
    // bounded and owner-only
    expect((await req("GET", "/audit?limit=101")).status).toBe(400);
    expect((await req("GET", "/admin/audit", { key: c1.apiKey })).status).toBe(401);
    expect((await req("GET", "/admin/audit/verify")).status).toBe(401);
  });

  it("aps audit verify passes, and after a raw-SQL change fails naming the entry", async () => {
    const ok = await cli(["audit", "verify"]);
    const walked = JSON.parse(ok.stdout);
    expect(walked).toMatchObject({ ok: true, firstBadSeq: null });
    expect(walked.entries).toBeGreaterThan(0);
    expect((await req("GET", "/admin/audit/verify", admin())).body).toMatchObject({ ok: true, firstBadSeq: null });

    if (!sys.env?.DATABASE_URL) return; // the embedded database is not reachable from the test
    const target = (await entries("/admin/audit?actor=owner&limit=1", sys.adminToken))[0]!;
    const db = new pg.Client({ connectionString: sys.env.DATABASE_URL });
    await db.connect();
    try {
      // the table refuses it …
      await expect(
        db.query("UPDATE notifications.audit_log SET reason = 'nothing' WHERE seq = $1", [target.seq]),
      ).rejects.toThrow(/append-only/);
      // … so a superuser goes around the trigger: the chain still tells
      await db.query("SET session_replication_role = replica");
      await db.query("UPDATE notifications.audit_log SET actor = 'someone else' WHERE seq = $1", [target.seq]);
    } finally {
      await db.end();
    }
    await expect(cli(["audit", "verify"])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`broken at entry ${target.seq}`),
    });
    expect((await req("GET", "/admin/audit/verify", admin())).body).toMatchObject({
      ok: false,
      firstBadSeq: target.seq,
    });
  });
});
