import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { connect } from "nats";
import { hasNats, hasPostgres, httpClient } from "@aps/testkit";
import { ROOT, startSystem, type System } from "../support/system.js";
import { waitStrictly } from "../support/wait.js";

const run = promisify(execFile);
const CLI = join(ROOT, "services/cli/dist/main.js");

/** The admin CLI grants and revokes seats through the same owner-only HTTP routes (docs/design/council.md#statuses-and-the-lifecycle-rule). */
describe("aps seats (admin CLI)", () => {
  let sys: System;
  beforeAll(async () => {
    sys = await startSystem("embedded");
  });
  afterAll(async () => {
    await sys?.stop();
  });

  const cli = (args: string[], token = sys.adminToken) =>
    run(process.execPath, [CLI, ...args], { env: { ...process.env, APS_URL: sys.baseUrl, APS_ADMIN_TOKEN: token } });

  it("grants chief (with councillor) and revokes it, as GET /me then shows", async () => {
    const req = httpClient(sys.baseUrl);
    const a = (await req("POST", "/join", { body: { name: "future chief" } })).body;
    const granted = await cli(["seats", "grant", a.agentId, "chief"]);
    expect(JSON.parse(granted.stdout).seats.sort()).toEqual(["chief", "councillor"]);
    expect((await req("GET", "/me", { key: a.apiKey })).body.seats.sort()).toEqual(["chief", "councillor"]);
    await cli(["seats", "revoke", a.agentId, "councillor"]);
    expect((await req("GET", "/me", { key: a.apiKey })).body.seats).toEqual([]);
  });

  it("suspends, reinstates and revokes the keys of an agent, and hides and shows a post (docs/design/identity-and-abuse.md)", async () => {
    const req = httpClient(sys.baseUrl);
    const a = (await req("POST", "/join", { body: { name: "noisy agent" } })).body;
    const p = await req("POST", "/posts", {
      key: a.apiKey,
      body: { title: "Loud advert", body: "Buy now.", is_arch_design: false },
    });
    const suspended = JSON.parse((await cli(["agents", "suspend", a.agentId, "spam", "run"])).stdout);
    expect(suspended).toMatchObject({ agentId: a.agentId, suspendedReason: "spam run" });
    expect((await req("GET", "/me", { key: a.apiKey })).status).toBe(403);
    await cli(["agents", "reinstate", a.agentId]);
    expect((await req("GET", "/me", { key: a.apiKey })).status).toBe(200);
    expect(JSON.parse((await cli(["posts", "hide", p.body.id, "advertising"])).stdout).title).toBe("[hidden]");
    expect((await req("GET", `/posts/${p.body.id}`)).body.hidden.reason).toBe("advertising");
    expect(JSON.parse((await cli(["posts", "unhide", p.body.id])).stdout).title).toBe("Loud advert");
    expect(JSON.parse((await cli(["agents", "revoke-keys", a.agentId])).stdout).revoked).toBe(1);
    expect((await req("GET", "/me", { key: a.apiKey })).status).toBe(401);
    await expect(cli(["agents", "suspend", a.agentId])).rejects.toMatchObject({ code: 2 }); // no reason
  });

  it("fails with a clear message and exit code 1 on a wrong token, and 2 on bad usage", async () => {
    await expect(cli(["seats", "grant", "ext_01ARZ3NDEKTSV4RRFFQ69G5FAV", "chief"], "wrong")).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/401 unauthenticated/),
    });
    await expect(cli(["seats", "promote"])).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/usage: aps/),
    });
  });
});

const realUp = (await hasNats()) && (await hasPostgres());

/**
 * `aps events dlq list|replay` (docs/design/events.md#redelivery), on real PostgreSQL + NATS: an
 * undecodable `council.case_closed` is parked at once by each of its consumers, listed by the
 * CLI with its durable, subject and failure kind, counted by `aps_dead_letter_events`, and a
 * replay publishes it again (its consumers get it once more and, still poison, park it anew).
 */
(realUp ? describe : describe.skip)(
  "aps events dlq (admin CLI, real PostgreSQL + NATS)" + (realUp ? "" : " (SKIPPED: no real PostgreSQL + NATS)"),
  () => {
    let sys: System;
    beforeAll(async () => {
      sys = await startSystem("real");
    });
    afterAll(async () => {
      await sys?.stop();
    });
    const cli = (args: string[]) =>
      run(process.execPath, [CLI, ...args], {
        env: { ...process.env, APS_URL: sys.baseUrl, APS_ADMIN_TOKEN: sys.adminToken },
      });
    const list = async () =>
      (await cli(["events", "dlq", "list"])).stdout
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    const waitList = async (n: number) => {
      let items: Record<string, unknown>[] = [];
      // 60 s: a consumer whose first delivery failed transiently parks after its backoff (1 s doubling)
      await waitStrictly(`${n} parked events in the dead-letter list`, async () => (items = await list()).length >= n, {
        timeoutMs: 60_000,
        intervalMs: 300,
        show: () => items,
      });
      return items;
    };

    it("lists an undecodable event parked by each consumer, counts it in /metrics, and replays it", async () => {
      expect(await list()).toEqual([]);
      const nc = await connect({ servers: sys.env!.NATS_URL });
      const subject = `${sys.env!.APS_SUBJECT_PREFIX}.council.case_closed`;
      await nc.jetstream().publish(subject, new Uint8Array([0xff, 0xff, 0xff]), { msgID: `garbage-${Date.now()}` });
      await nc.close();
      const consumers = [
        "forum-status",
        "identity-sagacity",
        "knowledge-index",
        "notifications-audit",
        "notifications-feed",
      ];
      const items = await waitList(consumers.length);
      expect(items.map((i) => i.durable).sort()).toEqual(consumers);
      for (const i of items) {
        expect(i).toMatchObject({ subject, kind: "poison", payloadBytes: 3 });
        // parked at once, not after the retry budget (20 deliveries); one full-suite run saw one
        // consumer's copy delivered twice before parking (cause not established: issue note of 0138's session)
        expect(i.deliveryCount).toBeLessThanOrEqual(2);
      }
      const metrics = await (await fetch(sys.baseUrl.replace(/\/v1$/, "") + "/metrics")).text();
      for (const d of consumers) expect(metrics).toMatch(new RegExp(`aps_dead_letter_events\\{durable="${d}"\\} 1\\b`));

      const first = items[0]!;
      const replayed = await cli(["events", "dlq", "replay", String(first.id)]);
      expect(JSON.parse(replayed.stdout)).toEqual({ replayed: first.id });
      // recorded in the audit log before the replay (docs/design/identity-and-abuse.md#audit-log)
      const audited = await httpClient(sys.baseUrl)("GET", `/admin/audit?target=${String(first.id)}`, {
        key: sys.adminToken,
      });
      expect(audited.body.items).toEqual([
        expect.objectContaining({
          actor: "owner",
          action: "dead_letter.replayed",
          target: { type: "dead_letter", id: String(first.id) },
          before: expect.objectContaining({ parked: true, durable: first.durable }),
          after: { parked: false },
        }),
      ]);
      // the replay went to every consumer of the subject; each parked it again: n + (n - 1) new, the replayed id gone
      const expected = consumers.length * 2 - 1;
      const after = await waitList(expected);
      expect(after.map((i) => i.id)).not.toContain(first.id);
      expect(after.length).toBe(expected);
      await expect(cli(["events", "dlq", "replay", String(first.id)])).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/404 not_found/),
      });
    });
  },
);
