import { randomUUID } from "node:crypto";
import { connect } from "node:net";
import { httpClient, waitUntil, type HttpRequest } from "@aps/testkit";
import { joinAgents, propose, type JoinedAgent } from "../support/fixtures.js";
import { availableModes, startSystem, type System, type TopologyProcess } from "../support/system.js";

/**
 * Replicas locally (docs/design/operations.md#local-replicas; balanced gRPC: item 1, docs/design/services.md#balancing-and-connection-age): the
 * distributed topology with REPLICAS_FORUM=2 REPLICAS_GATEWAY=2 runs two forum and two gateway
 * processes; every client is given both forums (`ipv4:…,…`) and spreads its calls round_robin, so a
 * burst through both gateways lands on both forums within ±25 % of each other — read from each
 * process's own `/metrics` (`aps_grpc_server_handled_total`, `aps_http_requests_total`). A forum
 * replica killed (SIGKILL) under load costs no read, no vote — keyed or not — and no keyed write
 * (all retried on UNAVAILABLE, now to the other replica: reads and CastVote are declared
 * NO_SIDE_EFFECTS / IDEMPOTENT, keyed writes run once per key; docs/design/services.md#retries-declared-in-the-proto, docs/design/edge.md#idempotency-key, docs/design/votes-and-heat.md#idempotent-castvote) and no
 * unkeyed comment beyond the ones in flight when it died (never retried: it may have been applied). One mode: `distributed` (what `npm run start:distributed` runs).
 */
const real = (await availableModes()).includes("distributed");
if (!real) console.warn("[replicas.test] NO REAL PostgreSQL + NATS: the replicas test is SKIPPED");

/** Sum of the samples of `name` in a Prometheus text whose labels include `match`. */
function total(text: string, name: string, match: (labels: string) => boolean): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const labels = line.slice(name.length + 1, line.lastIndexOf("}"));
    if (match(labels)) sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}
const metricsOf = async (p: TopologyProcess) => (await fetch(p.metrics!)).text();
/**
 * Calls a forum process handled, every method: one post read is two forum calls (GetPost and
 * ListPostEvents) that round_robin sends to different replicas, so no one method is the share.
 */
const forumCalls = (text: string) =>
  total(text, "aps_grpc_server_handled_total", (l) => l.includes("/aps.forum.v1.ForumService/"));
const votesServed = (text: string) =>
  total(text, "aps_http_requests_total", (l) => l.includes('route="/v1/posts/:id/vote"'));

(real ? describe : describe.skip)("replicas (distributed, REPLICAS_FORUM=2 REPLICAS_GATEWAY=2)", () => {
  let sys: System;
  let forums: TopologyProcess[];
  let gateways: HttpRequest[];
  let gatewayProcs: TopologyProcess[];
  let voters: JoinedAgent[];
  let posts: string[];

  beforeAll(async () => {
    sys = await startSystem("distributed", {
      replicas: { forum: 2, gateway: 2 },
      env: {
        JOINS_PER_SOURCE_PER_DAY: "10000",
        POSTS_PER_DAY: "1000",
        COMMENTS_PER_DAY: "100000",
        AGENDA_MIN_SCORE: "100000",
      },
    });
    const procs = sys.processes ?? [];
    forums = procs.filter((p) => p.name === "forum");
    gatewayProcs = procs.filter((p) => p.name === "gateway");
    gateways = gatewayProcs.map((g) => httpClient(`http://127.0.0.1:${g.port}/v1`));
    voters = await joinAgents(sys, 10, "replica voter");
    const [author] = await joinAgents(sys, 1, "replica author");
    posts = [];
    for (const i of [0, 1, 2]) posts.push(await propose(author!, { title: `Replicated ${i}`, body: "Body." }));
  }, 180_000);
  afterAll(async () => {
    await sys?.stop();
  });

  /**
   * Request `i` of a burst: a vote (even) or a post read (odd), through gateway `⌊i / 2⌋ % 2`;
   * `keyed` sends an Idempotency-Key; `comment` sends an unkeyed comment instead of a vote.
   */
  const request = (i: number, keyed = true, comment = false) => {
    const gw = gateways[Math.floor(i / 2) % 2]!;
    const voter = voters[i % voters.length]!;
    const post = posts[i % posts.length]!;
    if (i % 2 === 1) return gw("GET", `/posts/${post}`, { key: voter.apiKey });
    if (comment) return gw("POST", `/posts/${post}/comments`, { key: voter.apiKey, body: { body: `Comment ${i}.` } });
    return gw("POST", `/posts/${post}/vote`, {
      key: voter.apiKey,
      body: { vote: i % 4 === 0 ? 1 : -1 },
      ...(keyed ? { headers: { "Idempotency-Key": randomUUID() } } : {}),
    });
  };

  it("starts two forums and two gateways on consecutive ports, each with its own /metrics", () => {
    expect(forums).toHaveLength(2);
    expect(gatewayProcs).toHaveLength(2);
    expect(gatewayProcs[1]!.port).toBe(gatewayProcs[0]!.port + 1);
    for (const p of [...forums, ...gatewayProcs]) expect(p.metrics).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  });

  it("spreads a burst of 200 votes and reads over both forums within ±25 % (each process's /metrics)", async () => {
    const before = await Promise.all(forums.map(metricsOf));
    const gwBefore = await Promise.all(gatewayProcs.map(metricsOf));
    const statuses: number[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < 200) statuses.push((await request(next++)).status);
      }),
    );
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    const after = await Promise.all(forums.map(metricsOf));
    const share = after.map((t, i) => forumCalls(t) - forumCalls(before[i]!));
    // every vote and every read reached a forum (a read may be answered from a gateway's cache: ≥ 100)
    expect(share[0]! + share[1]!).toBeGreaterThanOrEqual(100);
    expect(Math.min(...share) / Math.max(...share)).toBeGreaterThanOrEqual(0.75);
    const gwAfter = await Promise.all(gatewayProcs.map(metricsOf));
    // each gateway served its half of the votes, counted in its own /metrics
    expect(gwAfter.map((t, i) => votesServed(t) - votesServed(gwBefore[i]!))).toEqual([50, 50]);
  }, 60_000);

  it("a revoked key and a suspended agent are refused by both gateways within 1 s of the owner's answer, though each had them cached (docs/design/identity-and-abuse.md#suspension-and-revocation)", async () => {
    const [revoked, suspended] = await joinAgents(sys, 2, "replica revoked");
    const owner = { authorization: `Bearer ${sys.adminToken}` };
    // warm both gateways' authentication caches (60-s TTL while following events)
    for (const a of [revoked!, suspended!])
      for (const gw of gateways) expect((await gw("GET", "/me", { key: a.apiKey })).status).toBe(200);
    const refusedEverywhere = async (key: string, status: number, answeredAt: number) => {
      await waitUntil(
        "both gateways refuse the key",
        async () =>
          (await Promise.all(gateways.map((gw) => gw("GET", "/me", { key })))).every((r) => r.status === status),
        { timeoutMs: 5_000, intervalMs: 20 },
      );
      return Date.now() - answeredAt;
    };
    const revokedAnswer = await gateways[0]!("POST", `/admin/agents/${revoked!.agentId}/keys/revoke`, {
      headers: owner,
    });
    const revokedAt = Date.now();
    expect(revokedAnswer.status).toBe(200);
    const suspendedAnswer = await gateways[1]!("POST", `/admin/agents/${suspended!.agentId}/suspend`, {
      headers: owner,
      body: { reason: "replica test" },
    });
    const suspendedAt = Date.now();
    expect(suspendedAnswer.status).toBe(200);
    expect(await refusedEverywhere(revoked!.apiKey, 401, revokedAt)).toBeLessThan(1_000);
    expect(await refusedEverywhere(suspended!.apiKey, 403, suspendedAt)).toBeLessThan(1_000);
  }, 60_000);

  it("a forum replica killed under load costs no read and no vote, and no unkeyed comment beyond those in flight", async () => {
    const [survivor, victim] = forums as [TopologyProcess, TopologyProcess];
    const before = forumCalls(await metricsOf(survivor));
    const failed: { i: number; status: number; kind: "read" | "vote" | "unkeyed vote" | "unkeyed comment" }[] = [];
    let inFlightUnkeyed = 0;
    let startedUnkeyed = 0;
    let inFlightAtKill = -1;
    let killed = false;
    let n = 0;
    /** Requests sent when the victim's port was closed; the load goes on for AFTER more. */
    let nAtGone: number | undefined;
    const AFTER = 120;
    // The kill comes once the load is under way (40 requests sent). "In flight on it": every unkeyed
    // comment started before the victim's sockets were gone (its gRPC port refuses connections). One
    // started in the instant between the signal and the kernel closing the dying process's sockets
    // could still be sent over its open connection.
    const killer = (async () => {
      await waitUntil("the load under way (40 requests sent)", () => n >= 40, { timeoutMs: 30_000, intervalMs: 5 });
      inFlightAtKill = inFlightUnkeyed;
      process.kill(victim.pid, "SIGKILL");
      killed = true;
      const startedAtKill = startedUnkeyed;
      while (await portOpen(victim.port));
      inFlightAtKill += startedUnkeyed - startedAtKill;
      nAtGone = n;
    })();
    // a kill that failed ends the load too (awaited below)
    killer.catch(() => (nAtGone = n - AFTER));
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (nAtGone === undefined || n < nAtGone + AFTER) {
          const i = n++;
          // every fourth request unkeyed: a vote (retried all the same: a ballot is a state,
          // docs/design/votes-and-heat.md#idempotent-castvote) or a comment (never retried: it may have been applied)
          const keyed = i % 4 !== 2;
          const comment = i % 8 === 6;
          if (comment) {
            inFlightUnkeyed++;
            startedUnkeyed++;
          }
          const r = await request(i, keyed, comment);
          if (comment) inFlightUnkeyed--;
          const kind = i % 2 === 1 ? "read" : comment ? "unkeyed comment" : keyed ? "vote" : "unkeyed vote";
          if (r.status !== (comment ? 201 : 200)) failed.push({ i, status: r.status, kind });
        }
      }),
    );
    await killer;
    expect(killed).toBe(true);
    expect(failed.filter((f) => f.kind !== "unkeyed comment")).toEqual([]);
    expect(failed.length).toBeLessThanOrEqual(inFlightAtKill);
    // the survivor carries on: later calls all land on it
    const after = forumCalls(await metricsOf(survivor));
    expect(after - before).toBeGreaterThan(n / 4);
    for (let i = 0; i < 20; i++) expect((await request(i)).status).toBe(200);
  }, 60_000);
});

/** Whether 127.0.0.1:`port` accepts a TCP connection now (a killed process's port refuses). */
function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}
