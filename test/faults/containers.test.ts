import { randomUUID } from "node:crypto";
import { containerImagesOrSkip, docker, httpClient, pause, uniqueSuffix } from "@aps/testkit";
import { startContainerTopology, type ContainerTopology } from "@aps/testkit/containers";
import { joinAgents, seatCouncil } from "../support/fixtures.js";
import { waitStrictly } from "../support/wait.js";
import {
  actualSagacity,
  ADMIN_TOKEN,
  eventually,
  expectedLedgerRows,
  expectedSagacity,
  FAULT_LIMITS,
  ok,
  owner,
  outboxRowsPending,
  readyz,
  searchIds,
  streamState,
  unsettledConsumers,
  type AckedVote,
  type Agent,
  type Req,
} from "./support.js";

/**
 * Faults only a container gives (docs/reliability.md), on the distributed topology in
 * containers (packages/testkit/src/containers.ts: PostgreSQL, NATS and one container per service
 * from the locally built images, NATS on a network of its own that every APS container also
 * joins, JetStream's data on a named volume):
 * - PostgreSQL frozen with `docker pause` (a hung server, not a dead one: connections stay open,
 *   nothing answers) for 9 s in a burst of writes;
 * - one service cut off NATS (`docker network disconnect` from the NATS network; its gRPC peers
 *   and PostgreSQL stay reachable) for 9 s and reconnected — identity (consumer of the Council's
 *   closes) and the forum (publisher of posts and votes);
 * - the NATS container stopped and started again with its volume, in a burst of writes.
 * Every write is sent with an Idempotency-Key and, when answered 503 problem+json (or 409
 * `idempotency_in_progress`), repeated with the same key as a client would: no answer other than
 * 2xx, 503 and that 409 is accepted. Afterwards the oracle of nats-restart.test.ts: Sagacity of
 * every agent equals the test's own computation from the rules (docs/design/council.md#statuses-and-the-lifecycle-rule), the
 * ledger has exactly the expected rows, every accepted post is listed once and found by search,
 * every outbox is empty (read in PostgreSQL) and every durable consumer of the stream has
 * delivered and acknowledged everything (JetStream consumer info): 0 events lost.
 * The four faults run one after another on one topology (each with its own agents and posts);
 * each starts only once the previous one's system is settled again.
 */
const SUITE = "faults in containers (docker pause PostgreSQL, network cut to NATS, NATS container restart)";
const images = containerImagesOrSkip(SUITE);
const TIMEOUT = 300_000;
/** How long each fault lasts (the one deliberate wait of the suite). */
const FAULT_MS = 9_000;
/** The topology's JetStream stream (services' default NATS_STREAM). */
const STREAM = "APS";

/** What one fault run's requests got. */
interface Tally {
  /** HTTP requests sent (retries included). */
  requests: number;
  /** Writes answered 2xx. */
  accepted: number;
  /** Answers 503 problem+json (each repeated with its key). */
  unavailable: number;
  /** Answers 409 `idempotency_in_progress` to a repetition (the first attempt still running). */
  inProgress: number;
  /** The slowest answer, ms. */
  slowestMs: number;
}

type Close = { post: string; author: string; outcome: "adopted" | "rejected" };

/** One fault run's workload: its own agents post, vote and comment; the suite's Council closes cases. */
class Workload {
  agents: Agent[] = [];
  readonly votes: AckedVote[] = [];
  readonly closes: Close[] = [];
  readonly posts: { id: string; author: Agent }[] = [];
  readonly tally: Tally = { requests: 0, accepted: 0, unavailable: 0, inProgress: 0, slowestMs: 0 };
  /** Numbers the proposals' titles (taken before the request: proposals run in parallel). */
  private proposals = 0;

  constructor(
    private readonly req: Req,
    private readonly seats: Agent[],
    readonly word: string,
  ) {}

  /**
   * POSTs `body` to `path` as `agent` with a fresh Idempotency-Key until the answer is `status`;
   * a 503 problem+json or a 409 `idempotency_in_progress` is repeated with the same key after
   * 250 ms (a client's back-off) until it is accepted (≤ 100 s, stretched on a loaded machine); any
   * other answer fails the test at once. Resolves the accepted body.
   */
  async write(agent: Agent, path: string, body: unknown, status: number): Promise<Record<string, unknown>> {
    const key = randomUUID();
    return waitStrictly(
      `POST ${path} answered ${status}`,
      async () => {
        const t0 = Date.now();
        const r = await this.req("POST", path, { key: agent.apiKey, body, headers: { "idempotency-key": key } });
        this.tally.requests++;
        this.tally.slowestMs = Math.max(this.tally.slowestMs, Date.now() - t0);
        if (r.status === status) {
          this.tally.accepted++;
          return r.body as Record<string, unknown>;
        }
        if (r.status === 503) {
          expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
          expect(r.body).toMatchObject({ status: 503, code: "upstream_unavailable" });
          this.tally.unavailable++;
        } else if (r.status === 409 && (r.body as { code?: string }).code === "idempotency_in_progress") {
          this.tally.inProgress++;
        } else {
          throw new Error(`POST ${path}: expected ${status}, got ${r.status} ${r.text.slice(0, 300)}`);
        }
        return undefined;
      },
      { timeoutMs: 100_000, intervalMs: 250 },
    );
  }

  /** A proposal by `author`, recorded as accepted. */
  async propose(author: Agent): Promise<string> {
    const n = this.proposals++;
    const b = await this.write(
      author,
      "/posts",
      {
        title: `${this.word} proposal ${n}`,
        body: `Container fault run ${this.word}, proposal ${n}.`,
        is_arch_design: true,
      },
      201,
    );
    this.posts.push({ id: b.id as string, author });
    return b.id as string;
  }

  /** A public vote, recorded in acknowledgement order. */
  async vote(agent: Agent, post: string, vote: 1 | -1): Promise<void> {
    await this.write(agent, `/posts/${post}/vote`, { vote }, 200);
    this.votes.push({ post, agent: agent.agentId, vote });
  }

  /** A decisive close by the three seats: nominator + one approval adopts; two rejections reject. */
  async close(post: string, outcome: Close["outcome"]): Promise<void> {
    const author = this.posts.find((p) => p.id === post)!.author;
    await this.write(this.seats[0]!, `/posts/${post}/nominate`, {}, 200);
    const ballots = outcome === "adopted" ? [this.seats[1]!] : [this.seats[1]!, this.seats[2]!];
    let last: Record<string, unknown> = {};
    for (const s of ballots)
      last = await this.write(
        s,
        `/posts/${post}/council`,
        { vote: outcome === "adopted" ? "approve" : "reject", reason: "container fault run" },
        200,
      );
    expect(last.status).toBe(outcome);
    this.closes.push({ post, author: author.agentId, outcome });
  }

  /**
   * Every agent, in parallel, votes round after round on `targets` (flips included), comments
   * every 4th round and proposes in rounds 1, 4 and 7, until `done()` holds after at least
   * `minRounds` rounds.
   */
  async burst(targets: string[], done: () => boolean, minRounds: number): Promise<void> {
    await Promise.all(
      this.agents.map(async (a, k) => {
        for (let r = 0; r < minRounds || !done(); r++) {
          if (r > 500) throw new Error("burst did not end");
          const post = targets[(k + r) % targets.length]!;
          await this.vote(a, post, (k * 3 + r) % 5 < 3 ? 1 : -1);
          if (r % 4 === 3) await this.write(a, `/posts/${post}/comments`, { body: `comment ${r} by ${a.name}` }, 201);
          if (r % 3 === 1 && r < 10) await this.propose(a);
        }
      }),
    );
  }
}

/** The host port Docker publishes `port`/tcp of container `id` on (it changes when the container starts again). */
async function publishedPort(id: string, port: number): Promise<number> {
  const out = await docker("port", id, `${port}/tcp`);
  const m = /:(\d+)\s*$/m.exec(out.split("\n")[0] ?? "");
  if (!m) throw new Error(`no published port ${port} of ${id}: ${out}`);
  return Number(m[1]);
}

/** What a fault does: inject it; optionally check while it lasts that it bites; lift it. */
interface Fault {
  name: string;
  /** 503 answers are expected (PostgreSQL frozen); otherwise a 503 fails the run. */
  allow503: boolean;
  inject(): Promise<void>;
  /** Called while the fault lasts, after the Council closes made during it (when they can finish). */
  whileDown?(w: Workload, closesDuring: Promise<void>): Promise<void>;
  lift(): Promise<void>;
}

(images ? describe : describe.skip)(SUITE, () => {
  let topo: ContainerTopology;
  let req: Req;
  let seats: Agent[];
  /** The NATS URL the test reaches (its published port changes when the container starts again). */
  let natsUrl: string;

  beforeAll(async () => {
    topo = await startContainerTopology(
      images!,
      { APS_ADMIN_TOKEN: ADMIN_TOKEN, ...FAULT_LIMITS },
      { separateNatsNetwork: true, natsVolume: true, readyTimeoutMs: 240_000 },
    );
    natsUrl = topo.hostUrls.nats;
    req = httpClient(`${topo.gatewayUrl}/v1`);
    seats = await joinAgents(req, 3, "container-fault seat");
    await seatCouncil(owner(req), seats);
  }, TIMEOUT);
  afterAll(async () => {
    await topo?.stop();
  }, TIMEOUT);

  /**
   * One fault run: fresh agents, six proposals, votes on three of them; a burst of votes,
   * comments and proposals on the other three, with the fault injected in its middle for
   * FAULT_MS and the first three closed by the Council meanwhile; the other three closed after;
   * then the oracle. Resolves the one-line figures.
   */
  async function run(label: string, fault: Fault): Promise<string> {
    await eventually(async () => expect(await readyz(topo.gatewayUrl)).toBe(200), 120_000);
    const w = new Workload(req, seats, `ctrfault${uniqueSuffix()}`);
    w.agents = await joinAgents(req, 10, `container-fault ${label}`);
    for (let i = 0; i < 6; i++) await w.propose(w.agents[i]!);
    const [p0, p1, p2, p3, p4, p5] = w.posts.map((p) => p.id) as [string, string, string, string, string, string];
    await Promise.all(w.agents.map((a, k) => w.vote(a, [p0, p1, p2][k % 3]!, k % 4 === 0 ? -1 : 1)));

    // the burst; the fault injected once it is under way
    let lifted = false;
    const burst = w.burst([p3, p4, p5], () => lifted, 4);
    const before = w.tally.accepted;
    await eventually(async () => expect(w.tally.accepted).toBeGreaterThanOrEqual(before + 15), 60_000, 20);
    const injectedAt = Date.now();
    await fault.inject();
    const closesDuring = (async () => {
      await w.close(p0, "adopted");
      await w.close(p1, "rejected");
      await w.close(p2, "adopted");
    })();
    closesDuring.catch(() => undefined);
    await fault.whileDown?.(w, closesDuring);
    const acceptedWhileDown = w.tally.accepted - before;
    // the deliberate fault duration
    await pause(
      Math.max(0, injectedAt + FAULT_MS - Date.now()),
      "the fault lasts FAULT_MS: its length is the test's subject",
    );
    const liftedAt = Date.now();
    await fault.lift();
    lifted = true;
    const downMs = liftedAt - injectedAt;
    await Promise.all([burst, closesDuring]);
    await w.close(p3, "adopted");
    await w.close(p4, "rejected");
    await w.close(p5, "adopted");
    if (!fault.allow503) expect(w.tally.unavailable).toBe(0);

    // every effect exactly once
    const expected = expectedSagacity(w.agents, w.votes, w.closes);
    expect(Object.values(expected).some((n) => n > 0)).toBe(true);
    await eventually(async () => expect(await actualSagacity(req, w.agents)).toEqual(expected), 120_000, 250);
    const sagacityMs = Date.now() - liftedAt;
    const ids = w.posts.map((p) => p.id).sort();
    await eventually(async () => expect([...(await searchIds(req, w.word))].sort()).toEqual(ids), 120_000, 250);
    const searchMs = Date.now() - liftedAt;
    await eventually(async () => {
      for (const c of w.closes)
        expect({ id: c.post, status: ok(await req("GET", `/posts/${c.post}`), 200, "detail").status }).toEqual({
          id: c.post,
          status: c.outcome,
        });
    }, 120_000);
    // every accepted post listed exactly once (a repeated write never wrote twice)
    const listed = (
      ok(await req("GET", "/posts?kind=arch&sort=new&limit=100"), 200, "list").items as { id: string; title: string }[]
    ).filter((p) => p.title.startsWith(`${w.word} `));
    expect(listed.map((p) => p.id).sort()).toEqual(ids);
    expect(new Set(listed.map((p) => p.title)).size).toBe(listed.length);
    // 0 events lost: every outbox relayed, every consumer delivered and acknowledged everything
    await eventually(
      async () =>
        expect(Object.values(await outboxRowsPending(topo.hostUrls.database)).every((n) => n === 0)).toBe(true),
      60_000,
      250,
    );
    const drainedMs = Date.now() - liftedAt;
    await eventually(async () => expect(await unsettledConsumers(natsUrl, STREAM)).toEqual([]), 120_000, 250);
    const settledMs = Date.now() - liftedAt;
    // no late duplicate once nothing can be redelivered any more
    expect(await actualSagacity(req, w.agents)).toEqual(expected);
    const ledgerRows = (
      await Promise.all(
        w.agents.map(
          async (a) =>
            ok(await req("GET", "/me/sagacity?limit=100", { key: a.apiKey }), 200, "ledger").items as unknown[],
        ),
      )
    ).reduce((n, items) => n + items.length, 0);
    expect(ledgerRows).toBe(expectedLedgerRows(w.votes, w.closes));

    const t = w.tally;
    const line =
      `[faults/containers] ${label}: fault ${downMs} ms; ${t.requests} write requests, ${t.accepted} answered 2xx ` +
      `(${acceptedWhileDown} while the fault was being injected and checked), ${t.unavailable} × 503 problem+json, ${t.inProgress} × 409 in progress ` +
      `(all repeated with their key until 2xx), slowest answer ${t.slowestMs} ms; ${w.posts.length} posts, ${w.votes.length} votes, ${w.closes.length} closes; ` +
      `after the fault: Sagacity exact in ${sagacityMs} ms, search complete in ${searchMs} ms, outboxes empty in ${drainedMs} ms, ` +
      `every consumer settled in ${settledMs} ms; ${ledgerRows} ledger rows; events lost 0, duplicate effects 0`;
    console.log(line);
    return line;
  }

  it(
    "PostgreSQL frozen by docker pause in a burst of writes: 503 or late answers, nothing lost, Sagacity exact",
    async () => {
      const id = topo.postgres.getId();
      let readyzWhilePaused = 0;
      await run("docker pause PostgreSQL", {
        name: "pause",
        allow503: true,
        inject: async () => void (await docker("pause", id)),
        whileDown: async () => {
          // the hung database reaches the gateway's readiness (the services' probes time out)
          await eventually(async () => expect(await readyz(topo.gatewayUrl)).toBe(503), FAULT_MS - 1_000, 250).then(
            () => (readyzWhilePaused = 503),
            () => (readyzWhilePaused = 200),
          );
        },
        lift: async () => void (await docker("unpause", id)),
      });
      console.log(`[faults/containers] docker pause PostgreSQL: /readyz while paused ${readyzWhilePaused}`);
    },
    TIMEOUT,
  );

  it.each(["identity", "forum"] as const)(
    "%s cut off NATS (docker network disconnect) and reconnected: writes go on, 0 events lost, Sagacity exact",
    async (service) => {
      const id = topo.services[service]!.getId();
      const net = topo.natsNetwork.getName();
      expect(net).not.toBe(topo.network.getName());
      await run(`${service} cut off NATS`, {
        name: "cut",
        allow503: false,
        inject: async () => void (await docker("network", "disconnect", net, id)),
        whileDown: async (w, closesDuring) => {
          if (service === "identity") {
            // the Council's closes are published, but no award reaches the cut-off identity
            await closesDuring;
            expect(Object.values(await actualSagacity(req, w.agents)).every((n) => n === 0)).toBe(true);
          } else {
            // the forum's writes are accepted and wait in its outbox
            await eventually(
              async () => expect((await outboxRowsPending(topo.hostUrls.database)).forum).toBeGreaterThan(0),
              FAULT_MS - 1_000,
              250,
            );
          }
        },
        lift: async () => void (await docker("network", "connect", net, id)),
      });
    },
    TIMEOUT,
  );

  it(
    "NATS container stopped and started again with its volume in a burst of writes: 0 events lost, Sagacity exact",
    async () => {
      const id = topo.nats.getId();
      let kept = { messages: 0, consumers: [] as string[] };
      await run("NATS container restart", {
        name: "restart",
        allow503: false,
        inject: async () => {
          kept = await streamState(natsUrl, STREAM);
          await docker("stop", "--time", "10", id);
        },
        whileDown: async () => {
          await eventually(
            async () =>
              expect(
                Object.values(await outboxRowsPending(topo.hostUrls.database)).reduce((a, b) => a + b, 0),
              ).toBeGreaterThan(0),
            FAULT_MS - 1_000,
            250,
          );
        },
        lift: async () => {
          await docker("start", id);
          natsUrl = `nats://127.0.0.1:${await publishedPort(id, 4222)}`;
        },
      });
      // JetStream came back from the volume: the stream kept its messages and the durable consumers
      const after = await streamState(natsUrl, STREAM);
      expect(after.consumers).toEqual(kept.consumers);
      expect(kept.consumers.length).toBeGreaterThan(0);
      expect(after.messages).toBeGreaterThan(kept.messages);
      console.log(
        `[faults/containers] NATS container restart: stream ${kept.messages} messages and ${kept.consumers.length} durable consumers before the stop, ${after.messages} messages and the same consumers after`,
      );
    },
    TIMEOUT,
  );
});

if (!images) {
  describe("faults in containers", () => {
    it.skip("NEEDS a Docker engine, APS_TEST_IMAGE=aps:dev and the aps-base images (skipped: absent here)", () =>
      undefined);
  });
}
