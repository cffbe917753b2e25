import net from "node:net";
import pg from "pg";
import {
  connect,
  headers as natsHeaders,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
} from "nats";
import { createLogger, openServiceDeps, type Logger } from "@aps/platform";
import { events } from "@aps/proto";
import { loadConfig as identityConfig, startIdentity } from "@aps/identity";
import { forumLimits, loadConfig as forumConfig, startForum } from "@aps/forum";
import { loadConfig as councilConfig, startCouncil, type CouncilHandle } from "@aps/council";
import { loadConfig as gatewayConfig, startGateway } from "@aps/gateway";
import {
  createTestDatabase,
  deleteTestStream,
  eventually,
  httpClient,
  OffsetClock,
  TEST_NATS_URL,
  testSeed,
  uniqueBusNames,
  uniqueSuffix,
  waitUntil,
  type TestDatabase,
} from "@aps/testkit";
import { expectStatus as ok, joinAgents, propose, seatCouncil, type JoinedAgent } from "../support/fixtures.js";
import { availableModes, startSystem, TEST_RATE_LIMITS, type System } from "../support/system.js";
import { outboxBacklog, unsettledConsumers } from "../faults/support.js";

/**
 * Sagacity (docs/design/council.md#sagacity-awards, docs/design/events.md) against an independent computation
 * after randomised runs (docs/design/council.md#statuses-and-the-lifecycle-rule):
 *
 * 1. over HTTP (modes `embedded` and `real`): ~40 agents, a Council of 3–5 seats, 8 proposals by
 *    random authors, random public votes and flips before the close, nominations and ballots to a
 *    decisive majority (some adopted, some rejected), more votes and flips after the close. The
 *    test keeps its own record of every vote (when it was sent and acknowledged) and of every
 *    close (when the closing request was sent and returned), computes each agent's Sagacity
 *    from the rules alone, and compares it with `GET /v1/me` and the `GET /v1/me/sagacity` ledger;
 * 2. (`real`) every `case_closed` event published again on JetStream under new Nats-Msg-Ids —
 *    with the identity consumer's processed_events intact, with them deleted (only the ledger's
 *    unique key protects), and as two replays at once: totals and ledger rows stay identical;
 * 3. (`real`, services started one by one in jest) the identity service stopped while cases
 *    close (two just before the stop, eight by the deadline scheduler while it is down), started
 *    again on the same port and database, stopped again midway through its backlog and started
 *    once more: no delivery is left unacknowledged by a stop, and the totals equal the
 *    independent computation; then a second identity instance joins the same durable consumer
 *    and the replays of (2) run again: totals and ledger still identical.
 *
 * Everything random comes from one seed (mulberry32), printed at the start; set
 * APS_TEST_SEED=<seed> to replay a failing run (testSeed, as every randomised test).
 */
const modes = (await availableModes()).filter((m) => m === "embedded" || m === "real");
const hasReal = modes.includes("real");
const BASE_SEED = testSeed("sagacity.test");
if (!hasReal)
  console.warn(
    "[sagacity.test] NO REAL PostgreSQL + NATS: the redelivery/replay and identity-restart parts are SKIPPED",
  );

const DAY = 86_400_000;
const TIMEOUT_MS = 240_000;
const ADMIN_TOKEN = "sagacity-admin-token-0123456789abcdef";
const LIMITS_ENV = {
  // every case opens by nomination, so the seed alone decides which posts reach the Council
  AGENDA_MIN_SCORE: "1000000",
  COUNCIL_DEADLINE: "7d",
  COUNCIL_TICK_MS: "50",
  JOINS_PER_SOURCE_PER_DAY: "100000",
  POSTS_PER_DAY: "1000",
  // the voters of a case (up to 40) paid 16 at a time: a case's awards span up to three VotesAt pages (docs/design/votes-and-heat.md#vote-history-and-votesat-paging)
  SAGACITY_VOTES_PAGE_SIZE: "16",
};

// ---------------------------------------------------------------------------------------------
// The rules, written from docs/design/council.md#statuses-and-the-lifecycle-rule (not imported from the services)

type Outcome = "adopted" | "rejected";
type Sign = 1 | -1;
const ADOPTION_POINTS = 10;
const MATCHING_VOTE_POINTS = 1;
const MISSED_VOTE_POINTS = -1;

/** The close rule while the case is open: a decision as soon as one is certain. */
function decisive(seats: number, approvals: number, rejections: number): Outcome | null {
  if (approvals > seats / 2) return "adopted";
  // every seat without a ballot could still approve: seats − rejections at most
  if (seats - rejections <= seats / 2) return "rejected";
  return null;
}

/** The close rule at COUNCIL_DEADLINE: quorum ceil(seats/2) and a majority of the ballots cast. */
function atDeadline(seats: number, approvals: number, rejections: number): Outcome {
  const ballots = approvals + rejections;
  return ballots >= Math.ceil(seats / 2) && approvals > ballots / 2 ? "adopted" : "rejected";
}

// ---------------------------------------------------------------------------------------------
// Seeded randomness

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Rng {
  private readonly next: () => number;
  constructor(readonly seed: number) {
    this.next = mulberry32(seed);
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  sign(): Sign {
    return this.chance(0.5) ? 1 : -1;
  }
  shuffle<T>(xs: readonly T[]): T[] {
    const a = [...xs];
    for (let i = a.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [a[i], a[j]] = [a[j]!, a[i]!];
    }
    return a;
  }
}

// ---------------------------------------------------------------------------------------------
// The test's own record of what it did, and the independent computation from it

interface VoteEntry {
  post: string;
  agent: string;
  vote: Sign;
  sent: number;
  acked: number;
}
interface CloseEntry {
  post: string;
  author: string;
  outcome: Outcome;
  sent: number;
  returned: number;
}

/**
 * Every vote and close with its place in one logical order: `sent` when the request left,
 * `acked`/`returned` when its answer (or, for a deadline close, its observation) came back.
 */
class RunRecord {
  private seq = 0;
  readonly votes: VoteEntry[] = [];
  readonly closes: CloseEntry[] = [];

  tick(): number {
    return ++this.seq;
  }
  addVote(post: string, agent: string, vote: Sign, sent: number): void {
    this.votes.push({ post, agent, vote, sent, acked: this.tick() });
  }
  addClose(post: string, author: string, outcome: Outcome, sent: number): void {
    this.closes.push({ post, author, outcome, sent, returned: this.tick() });
  }

  /**
   * Expected Sagacity per agent and the expected ledger rows (`reason:postId:points`): for each
   * closed case, the author +10 if adopted, and each agent whose vote in effect at the close (its
   * last vote acknowledged before the closing request was sent) has the outcome's sign +1, and
   * each whose vote has the other sign −1 (LAST_CALL_MS 0: the decision is the close).
   */
  expected(agentIds: string[]): { totals: Record<string, number>; rows: Record<string, string[]> } {
    const totals: Record<string, number> = Object.fromEntries(agentIds.map((a) => [a, 0]));
    const rows: Record<string, string[]> = Object.fromEntries(agentIds.map((a) => [a, [] as string[]]));
    const award = (agent: string, reason: string, post: string, points: number) => {
      totals[agent] = (totals[agent] ?? 0) + points;
      (rows[agent] ??= []).push(`${reason}:${post}:${points}`);
    };
    for (const c of this.closes) {
      const onPost = this.votes.filter((v) => v.post === c.post);
      const overlapping = onPost.filter((v) => v.sent < c.returned && v.acked > c.sent);
      if (overlapping.length > 0)
        throw new Error(
          `test bug: ${overlapping.length} vote(s) on ${c.post} overlapped its close; the vote in effect is ambiguous`,
        );
      const inEffect = new Map<string, Sign>();
      for (const v of onPost.filter((x) => x.acked < c.sent).sort((a, b) => a.acked - b.acked))
        inEffect.set(v.agent, v.vote);
      if (c.outcome === "adopted") award(c.author, "adoption", c.post, ADOPTION_POINTS);
      const sign: Sign = c.outcome === "adopted" ? 1 : -1;
      for (const [agent, v] of inEffect)
        award(agent, "vote", c.post, v === sign ? MATCHING_VOTE_POINTS : MISSED_VOTE_POINTS);
    }
    for (const a of Object.keys(rows)) rows[a]!.sort();
    return { totals, rows };
  }
}

// ---------------------------------------------------------------------------------------------
// The plan of a run: decided by the seed before anything is sent

interface BallotPlan {
  seat: number;
  vote: "approve" | "reject";
}
interface PostPlan {
  author: number;
  target: Outcome;
  nominator: number;
  /** Ballots after the nomination, up to and including the closing one. */
  ballots: BallotPlan[];
  /** A seat that had not voted when the case closed (its ballot must be refused), if any. */
  late: number | undefined;
  pre: { agent: number; votes: Sign[] }[];
  post: { agent: number; votes: Sign[] }[];
}
interface RunPlan {
  seats: number[];
  posts: PostPlan[];
}

/** Random public votes (with flips) by a random part of the agents. */
function randomVotes(
  rng: Rng,
  nAgents: number,
  share: number,
  flipOf?: Map<number, Sign>,
): { agent: number; votes: Sign[] }[] {
  const out: { agent: number; votes: Sign[] }[] = [];
  for (let a = 0; a < nAgents; a++) {
    if (!rng.chance(share)) continue;
    const votes: Sign[] = [];
    const prev = flipOf?.get(a);
    if (prev !== undefined && rng.chance(0.7)) votes.push(prev === 1 ? -1 : 1);
    const n = 1 + rng.int(3);
    while (votes.length < n) votes.push(rng.sign());
    out.push({ agent: a, votes });
  }
  return out;
}

/** Ballots from the seats other than the nominator that close the case decisively as `target`. */
function decisiveBallots(
  rng: Rng,
  nSeats: number,
  nominator: number,
  target: Outcome,
): { ballots: BallotPlan[]; late: number | undefined } {
  const others = rng.shuffle([...Array(nSeats).keys()].filter((s) => s !== nominator));
  const need = target === "adopted" ? Math.floor(nSeats / 2) + 1 - 1 : Math.ceil(nSeats / 2);
  const votes = new Map<number, "approve" | "reject">();
  others.slice(0, need).forEach((s) => votes.set(s, target === "adopted" ? "approve" : "reject"));
  others.slice(need).forEach((s) => votes.set(s, rng.chance(0.5) ? "approve" : "reject"));
  const order = rng.shuffle(others);
  let approvals = 1; // the nominator's
  let rejections = 0;
  const ballots: BallotPlan[] = [];
  for (const seat of order) {
    const vote = votes.get(seat)!;
    ballots.push({ seat, vote });
    if (vote === "approve") approvals++;
    else rejections++;
    const d = decisive(nSeats, approvals, rejections);
    if (d) {
      if (d !== target) throw new Error(`plan bug: ${target} planned, ${d} reached`);
      const late = order.find((s) => !ballots.some((b) => b.seat === s));
      return { ballots, late };
    }
  }
  throw new Error("plan bug: no decision");
}

/**
 * A random agent index that holds no seat: the plans' authors. A seated author is recused from its
 * own case (docs/reference/council.md "Positions"), which would change the electorate these plans
 * compute their outcomes over; the recusal has its own tests (test/e2e/council.test.ts).
 */
function unseated(rng: Rng, nAgents: number, seats: ReadonlySet<number>): number {
  for (;;) {
    const a = rng.int(nAgents);
    if (!seats.has(a)) return a;
  }
}

function makePlan(rng: Rng, nAgents: number, nPosts: number, nSeats: number): RunPlan {
  const seats = rng.shuffle([...Array(nAgents).keys()]).slice(0, nSeats);
  const seated = new Set(seats);
  const posts: PostPlan[] = [];
  for (let p = 0; p < nPosts; p++) {
    const target: Outcome = p === 0 ? "adopted" : p === 1 ? "rejected" : rng.chance(0.5) ? "adopted" : "rejected";
    const nominator = rng.int(nSeats);
    const { ballots, late } = decisiveBallots(rng, nSeats, nominator, target);
    const pre = randomVotes(rng, nAgents, 0.6);
    const last = new Map(pre.map((v) => [v.agent, v.votes[v.votes.length - 1]!]));
    posts.push({
      author: unseated(rng, nAgents, seated),
      target,
      nominator,
      ballots,
      late,
      pre,
      post: randomVotes(rng, nAgents, 0.35, last),
    });
  }
  return { seats, posts };
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers

type Req = ReturnType<typeof httpClient>;
type Agent = JoinedAgent;
/** The body of the proposals of these runs. */
const PROPOSAL_BODY = "Randomised Sagacity run.";

/** Sends `votes` of several agents on one post: agents in parallel, each agent's votes in order. */
async function castVotes(
  req: Req,
  rec: RunRecord,
  agents: Agent[],
  postId: string,
  plan: { agent: number; votes: Sign[] }[],
): Promise<number> {
  let n = 0;
  await Promise.all(
    plan.map(async ({ agent, votes }) => {
      const a = agents[agent]!;
      for (const vote of votes) {
        const sent = rec.tick();
        const b = ok(await req("POST", `/posts/${postId}/vote`, { key: a.apiKey, body: { vote } }), 200, "vote");
        expect(b.vote).toBe(vote);
        rec.addVote(postId, a.agentId, vote, sent);
        n++;
      }
    }),
  );
  return n;
}

/** Reads every agent's Sagacity via GET /me. */
async function totalsOf(req: Req, agents: Agent[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  await Promise.all(
    agents.map(async (a) => {
      out[a.agentId] = ok(await req("GET", "/me", { key: a.apiKey }), 200, "me").sagacity as number;
    }),
  );
  return out;
}

/** Reads one agent's whole ledger via GET /me/sagacity (every page). */
async function ledgerOf(req: Req, a: Agent): Promise<{ total: number; rows: string[]; sum: number }> {
  const rows: string[] = [];
  let sum = 0;
  let total: number;
  let cursor: string | null = null;
  do {
    const q: string = `/me/sagacity?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const b = ok(await req("GET", q, { key: a.apiKey }), 200, "me/sagacity");
    total = b.total;
    for (const it of b.items as { reason: string; postId: string; points: number }[]) {
      rows.push(`${it.reason}:${it.postId}:${it.points}`);
      sum += it.points;
    }
    cursor = b.nextCursor;
  } while (cursor);
  return { total, rows: rows.sort(), sum };
}

/**
 * Waits (≤ 15 s) until every agent's Sagacity equals the independent computation, then checks
 * every agent's ledger: its rows are exactly the expected awards and they sum to the total.
 */
async function expectSagacity(
  req: Req,
  agents: Agent[],
  rec: RunRecord,
  label: string,
): Promise<Record<string, number>> {
  const exp = rec.expected(agents.map((a) => a.agentId));
  const named = (m: Record<string, number>) => Object.fromEntries(agents.map((a) => [a.name, m[a.agentId]]));
  const t0 = Date.now();
  // a ceiling, not a wait: quiet it settles in 1–3 s; beside CI's side jobs the real mode took 14.9 s
  await eventually(async () => expect(named(await totalsOf(req, agents))).toEqual(named(exp.totals)), 45_000);
  for (const a of agents) {
    const l = await ledgerOf(req, a);
    expect({ agent: a.name, total: l.total, sum: l.sum, rows: l.rows }).toEqual({
      agent: a.name,
      total: exp.totals[a.agentId],
      sum: exp.totals[a.agentId],
      rows: exp.rows[a.agentId],
    });
  }
  const vals = Object.values(exp.totals);
  console.log(
    `[sagacity.test] ${label}: settled in ${Date.now() - t0} ms; ${agents.length} agents, total ${vals.reduce((s, x) => s + x, 0)} points, ` +
      `${vals.filter((x) => x > 0).length} agents with Sagacity, max ${Math.max(...vals)}`,
  );
  return exp.totals;
}

// ---------------------------------------------------------------------------------------------
// JetStream and database helpers (real mode)

const SAGACITY_DURABLE = "identity-sagacity";

/** Every `case_closed` event in `stream` (an ordered consumer), in stream order. */
async function readCaseClosed(
  js: JetStreamClient,
  jsm: JetStreamManager,
  stream: string,
  prefix: string,
): Promise<JsMsg[]> {
  const subject = `${prefix}.council.case_closed`;
  const info = await jsm.streams.info(stream, { subjects_filter: subject });
  const count = Object.values(info.state.subjects ?? {}).reduce((s, x) => s + x, 0);
  const out: JsMsg[] = [];
  if (count === 0) return out;
  // one filter subject (a list needs NATS server 2.10)
  const c = await js.consumers.get(stream, { filterSubjects: subject });
  while (out.length < count) {
    const batch = await c.fetch({ max_messages: count - out.length, expires: 2_000 });
    let got = 0;
    for await (const m of batch) {
      out.push(m);
      got++;
    }
    if (got === 0) break;
  }
  return out;
}

/** Publishes `msgs` again with new Nats-Msg-Ids (other headers kept); resolves the stream seqs. */
async function republish(js: JetStreamClient, msgs: JsMsg[], tag: string): Promise<number[]> {
  const seqs: number[] = [];
  const run = uniqueSuffix();
  for (const m of msgs) {
    const h = natsHeaders();
    if (m.headers)
      for (const [k, vs] of m.headers) if (k.toLowerCase() !== "nats-msg-id") for (const v of vs) h.append(k, v);
    const ack = await js.publish(m.subject, m.data, { msgID: `${tag}-${run}-${m.seq}`, headers: h });
    expect(ack.duplicate).toBe(false);
    seqs.push(ack.seq);
  }
  return seqs;
}

/** Waits until the Sagacity consumer has been delivered and acked everything up to `seq`. */
async function consumerCaughtUp(jsm: JetStreamManager, stream: string, seq: number): Promise<void> {
  await eventually(async () => {
    const i = await jsm.consumers.info(stream, SAGACITY_DURABLE);
    expect(i.delivered.stream_seq).toBeGreaterThanOrEqual(seq);
    expect(i.ack_floor.stream_seq).toBeGreaterThanOrEqual(seq);
    expect(i.num_ack_pending).toBe(0);
    expect(i.num_pending).toBe(0);
  }, 30_000);
}

/** Messages dead-lettered by the Sagacity consumer (a failed handler, five times). */
async function deadLettered(jsm: JetStreamManager, stream: string, prefix: string): Promise<number> {
  const subject = `${prefix}.dlq.${SAGACITY_DURABLE}`;
  const info = await jsm.streams.info(stream, { subjects_filter: subject });
  return Object.values(info.state.subjects ?? {}).reduce((s, x) => s + x, 0);
}

interface LedgerSnapshot {
  rows: string[];
  agents: Record<string, number>;
}

async function snapshot(db: pg.Client): Promise<LedgerSnapshot> {
  const r = await db.query<{ k: string }>(
    "SELECT agent_id || ':' || reason || ':' || post_id || ':' || points || ':' || event_id AS k FROM identity.sagacity_awards ORDER BY 1",
  );
  const a = await db.query<{ agent_id: string; sagacity: string }>("SELECT agent_id, sagacity FROM identity.agents");
  return {
    rows: r.rows.map((x) => x.k),
    agents: Object.fromEntries(a.rows.map((x) => [x.agent_id, Number(x.sagacity)])),
  };
}

async function forgetProcessed(db: pg.Client): Promise<number> {
  return (
    (await db.query("DELETE FROM identity.processed_events WHERE consumer = $1", [SAGACITY_DURABLE])).rowCount ?? 0
  );
}

async function countProcessed(db: pg.Client): Promise<number> {
  return (
    await db.query<{ n: number }>("SELECT count(*)::int AS n FROM identity.processed_events WHERE consumer = $1", [
      SAGACITY_DURABLE,
    ])
  ).rows[0]!.n;
}

/**
 * Replays every case_closed event in three ways — processed_events intact; processed_events
 * deleted (only the ledger's unique key protects); processed_events deleted and two replays at
 * once — and checks after each that the ledger and every total are exactly as before, and that
 * nothing was dead-lettered.
 */
async function replayThreeWays(
  nc: NatsConnection,
  db: pg.Client,
  stream: string,
  prefix: string,
  closed: CloseEntry[],
  label: string,
): Promise<void> {
  const js = nc.jetstream();
  const jsm = await nc.jetstreamManager();
  const msgs = await readCaseClosed(js, jsm, stream, prefix);
  // the events are the test's closes, one each, with the outcomes the rules gave
  const decoded = msgs.map((m) => events.CaseClosed.decode(m.data));
  expect(decoded.map((e) => `${e.postId}:${e.outcome}:${e.authorId}`).sort()).toEqual(
    closed.map((c) => `${c.post}:${c.outcome}:${c.author}`).sort(),
  );
  const before = await snapshot(db);
  expect(before.rows.length).toBeGreaterThan(0);
  expect(await countProcessed(db)).toBe(closed.length);

  const t0 = Date.now();
  const s1 = await republish(js, msgs, "replay1");
  await consumerCaughtUp(jsm, stream, Math.max(...s1));
  expect(await snapshot(db)).toEqual(before);

  expect(await forgetProcessed(db)).toBe(closed.length);
  const s2 = await republish(js, msgs, "replay2");
  await consumerCaughtUp(jsm, stream, Math.max(...s2));
  // the handler ran again for every event (processed_events re-recorded) and changed nothing
  expect(await countProcessed(db)).toBe(closed.length);
  expect(await snapshot(db)).toEqual(before);

  expect(await forgetProcessed(db)).toBe(closed.length);
  const [s3, s4] = await Promise.all([republish(js, msgs, "replay3a"), republish(js, msgs, "replay3b")]);
  await consumerCaughtUp(jsm, stream, Math.max(...s3, ...s4));
  expect(await countProcessed(db)).toBe(closed.length);
  expect(await snapshot(db)).toEqual(before);
  expect(await deadLettered(jsm, stream, prefix)).toBe(0);
  console.log(
    `[sagacity.test] ${label}: ${msgs.length} case_closed events replayed 4× (dedupe intact, dedupe deleted, two at once) in ${Date.now() - t0} ms; ledger ${before.rows.length} rows unchanged`,
  );
}

// ---------------------------------------------------------------------------------------------
// 1 + 2: the randomised run over HTTP, and (real) redelivery and replay

describe.each(modes)("Sagacity after a randomised run (%s)", (mode) => {
  const seed = (BASE_SEED + (mode === "embedded" ? 0 : 1)) >>> 0;
  let sys: System;
  let req: Req;
  let agents: Agent[] = [];
  const rec = new RunRecord();
  let expectedTotals: Record<string, number> = {};

  beforeAll(async () => {
    sys = await startSystem(mode, { clock: new OffsetClock(), env: LIMITS_ENV });
    req = httpClient(sys.baseUrl);
  }, TIMEOUT_MS);
  afterAll(async () => {
    await sys?.stop();
  }, TIMEOUT_MS);

  it(
    "equals the independent computation of the rules, in totals and ledger rows",
    async () => {
      const t0 = Date.now();
      const rng = new Rng(seed);
      const nSeats = 3 + rng.int(3);
      const plan = makePlan(rng, 40, 8, nSeats);
      console.log(
        `[sagacity.test] ${mode}: seed ${seed}, 40 agents, ${nSeats} seats, ${plan.posts.length} proposals (${plan.posts.map((p) => p.target[0]).join("")})`,
      );

      agents = await joinAgents(req, 40, mode);
      const seats = plan.seats.map((i) => agents[i]!);
      await seatCouncil(sys, seats);
      const postIds: string[] = [];
      for (const [i, p] of plan.posts.entries())
        postIds.push(await propose(agents[p.author]!, { title: `Proposal ${i}`, body: PROPOSAL_BODY }));

      let preVotes = 0;
      let postVotes = 0;
      let ballots = 0;
      // each post's script runs in order; the scripts of different posts run at once, so votes on
      // one post race with the closing ballot of another (never with their own post's close)
      await Promise.all(
        plan.posts.map(async (p, i) => {
          const id = postIds[i]!;
          const pre = await castVotes(req, rec, agents, id, p.pre);
          preVotes += pre;
          let approvals = 1;
          let rejections = 0;
          const nom = ok(
            await req("POST", `/posts/${id}/nominate`, { key: seats[p.nominator]!.apiKey }),
            200,
            "nominate",
          );
          expect(nom).toMatchObject({ status: "review", seats: nSeats, approvals: 1, rejections: 0 });
          for (const b of p.ballots) {
            if (b.vote === "approve") approvals++;
            else rejections++;
            const want = decisive(nSeats, approvals, rejections);
            const sent = rec.tick();
            const r = ok(
              await req("POST", `/posts/${id}/council`, {
                key: seats[b.seat]!.apiKey,
                body: { vote: b.vote, reason: `${b.vote}: seeded` },
              }),
              200,
              "ballot",
            );
            ballots++;
            expect(r).toMatchObject({ status: want ?? "review", approvals, rejections });
            if (want) rec.addClose(id, agents[p.author]!.agentId, want, sent);
          }
          if (p.late !== undefined) {
            const r = await req("POST", `/posts/${id}/council`, {
              key: seats[p.late]!.apiKey,
              body: { vote: "approve", reason: "too late" },
            });
            expect(r.status).toBe(409);
          }
          const post = await castVotes(req, rec, agents, id, p.post);
          postVotes += post;
        }),
      );
      expect(rec.closes).toHaveLength(plan.posts.length);
      const adopted = rec.closes.filter((c) => c.outcome === "adopted").length;
      console.log(
        `[sagacity.test] ${mode}: ${preVotes} votes before the closes, ${postVotes} after, ${ballots + plan.posts.length} nominations+ballots; ` +
          `${adopted} adopted, ${rec.closes.length - adopted} rejected; driven in ${Date.now() - t0} ms`,
      );
      expectedTotals = await expectSagacity(req, agents, rec, mode);
      // flips after the close change nothing later either: checked once every event has left the
      // outboxes and (real) no consumer has a delivery pending or unacknowledged — no effect can
      // come after that (a condition with a generous ceiling, not a fixed wait)
      await eventually(async () => {
        expect(await outboxBacklog(sys.baseUrl)).toBe(0);
        if (mode === "real") expect(await unsettledConsumers(TEST_NATS_URL, sys.env!.NATS_STREAM!)).toEqual([]);
      }, 90_000);
      expect(await totalsOf(req, agents)).toEqual(expectedTotals);
      console.log(`[sagacity.test] ${mode}: part 1 took ${Date.now() - t0} ms`);
    },
    TIMEOUT_MS,
  );

  (mode === "real" ? it : it.skip)(
    `${mode === "real" ? "" : "SKIPPED in this mode (needs the real NATS stream): "}stays equal after every case_closed is redelivered and replayed (new Nats-Msg-Ids, processed_events deleted, two replays at once)`,
    async () => {
      expect(Object.keys(expectedTotals)).toHaveLength(40); // part 1 ran and settled
      const env = sys.env!;
      const nc = await connect({ servers: env.NATS_URL! });
      const db = new pg.Client({ connectionString: env.DATABASE_URL });
      await db.connect();
      try {
        await replayThreeWays(nc, db, env.NATS_STREAM!, env.APS_SUBJECT_PREFIX!, rec.closes, mode);
        // and what agents see over HTTP is still the independent computation
        await expectSagacity(req, agents, rec, `${mode} after replays`);
      } finally {
        await db.end();
        await nc.close();
      }
    },
    TIMEOUT_MS,
  );
});

// ---------------------------------------------------------------------------------------------
// 3: identity restarted mid-stream (services started one by one in jest)

/** A free loopback TCP port (so the identity service can come back on the same address). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

interface IdentityRun {
  stop(): Promise<void>;
}

/** APS wired like the all-in-one (forum → identity → council → gateway) on real PostgreSQL + JetStream. */
async function startByParts(clock: OffsetClock) {
  const db: TestDatabase = await createTestDatabase();
  const names = uniqueBusNames();
  const env: Record<string, string> = {
    ...TEST_RATE_LIMITS,
    ...LIMITS_ENV,
    APS_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: "warn",
    PORT: "0",
    DATABASE_URL: db.url,
    NATS_URL: TEST_NATS_URL,
    NATS_STREAM: names.stream,
    APS_SUBJECT_PREFIX: names.prefix,
  };
  const log: Logger = createLogger("aps-sagacity-test", "warn");
  const idCfg = identityConfig(env);
  const forumCfg = forumConfig(env);
  const councilCfg = councilConfig(env);
  const gwCfg = gatewayConfig(env);

  const forumDeps = await openServiceDeps("forum", forumCfg, undefined, log.child({ service: "forum" }));
  const forum = await startForum(forumDeps, {
    listenAddr: "127.0.0.1:0",
    clock,
    limits: forumLimits(forumCfg),
  });
  const forumAddr = `127.0.0.1:${forum.port}`;
  const identityAddr = `127.0.0.1:${await freePort()}`;

  /** Starts an identity instance on its own database pool and NATS connection. */
  async function startIdentityAt(listenAddr: string): Promise<IdentityRun> {
    const deps = await openServiceDeps("identity", idCfg, undefined, log.child({ service: "identity" }));
    const h = await startIdentity(deps, {
      listenAddr,
      clock,
      forumAddr,
      joinsPerSourcePerDay: idCfg.JOINS_PER_SOURCE_PER_DAY,
      sagacityVotesPageSize: idCfg.SAGACITY_VOTES_PAGE_SIZE,
    });
    return { stop: async () => (await h.stop(), await deps.bus.close()) };
  }
  let identity: IdentityRun | undefined = await startIdentityAt(identityAddr);

  const councilDeps = await openServiceDeps("council", councilCfg, undefined, log.child({ service: "council" }));
  const council: CouncilHandle = await startCouncil(councilDeps, {
    listenAddr: "127.0.0.1:0",
    clock,
    identityAddr,
    forumAddr,
    deadlineMs: councilCfg.COUNCIL_DEADLINE,
    lastCallMs: 0, // these runs count closes at the deciding ballot (docs/reference/council.md "Last call")
    tickMs: councilCfg.COUNCIL_TICK_MS,
  });
  const gateway = await startGateway(
    {
      ...gwCfg,
      IDENTITY_GRPC_ADDR: identityAddr,
      FORUM_GRPC_ADDR: forumAddr,
      COUNCIL_GRPC_ADDR: `127.0.0.1:${council.port}`,
    },
    log.child({ service: "gateway" }),
  );
  const extra: IdentityRun[] = [];
  return {
    env,
    council,
    baseUrl: gateway.baseUrl,
    identityAddr,
    async stopIdentity() {
      await identity?.stop();
      identity = undefined;
    },
    async restartIdentity() {
      identity = await startIdentityAt(identityAddr);
    },
    /** A second identity instance (gRPC on a port of its own) sharing the database and durable consumer. */
    async addIdentityInstance() {
      extra.push(await startIdentityAt("127.0.0.1:0"));
    },
    async stop() {
      await gateway.stop();
      await council.stop();
      for (const x of extra) await x.stop();
      await identity?.stop();
      await forum.stop();
      for (const d of [forumDeps, councilDeps]) await d.bus.close();
      await deleteTestStream(names.stream);
      await db.drop();
    },
  };
}

(hasReal ? describe : describe.skip)(
  "Sagacity across an identity restart mid-stream (real, services one by one)" +
    (hasReal ? "" : " (SKIPPED: no real PostgreSQL + NATS)"),
  () => {
    const seed = (BASE_SEED + 2) >>> 0;
    const clock = new OffsetClock();
    let sys: Awaited<ReturnType<typeof startByParts>>;
    let req: Req;

    beforeAll(async () => {
      sys = await startByParts(clock);
      req = httpClient(sys.baseUrl);
    }, TIMEOUT_MS);
    afterAll(async () => {
      await sys?.stop();
    }, TIMEOUT_MS);

    it(
      "awards what the rules give for cases closed just before the stop and while identity is down, once it is back on the same port and database",
      async () => {
        const t0 = Date.now();
        const rng = new Rng(seed);
        const nAgents = 24;
        const nSeats = 5;
        const rec = new RunRecord();
        const agents = await joinAgents(req, nAgents, "restart");
        const seats = rng.shuffle(agents).slice(0, nSeats);
        await seatCouncil({ baseUrl: sys.baseUrl, adminToken: ADMIN_TOKEN }, seats);
        const seated = new Set(seats.map((a) => agents.indexOf(a)));

        // two cases closed decisively just before the stop, eight left undecided for the deadline
        // (with ballots), and more below
        const decisiveTargets: Outcome[] = ["adopted", "rejected"];
        const deadlineTargets: Outcome[] = [
          "adopted",
          "rejected",
          ...[0, 1, 2, 3, 4, 5].map((): Outcome => (rng.chance(0.5) ? "adopted" : "rejected")),
        ];
        const nPosts = decisiveTargets.length + deadlineTargets.length;
        const authors = [...Array(nPosts).keys()].map(() => agents[unseated(rng, nAgents, seated)]!);
        const postIds: string[] = [];
        for (let i = 0; i < nPosts; i++)
          postIds.push(await propose(authors[i]!, { title: `Restart proposal ${i}`, body: PROPOSAL_BODY }));
        const lastPre = postIds.map(() => new Map<number, Sign>());
        let votes = 0;
        const prePlans = postIds.map(() => randomVotes(rng, nAgents, 0.7));
        prePlans.forEach((pre, i) => pre.forEach((v) => lastPre[i]!.set(v.agent, v.votes[v.votes.length - 1]!)));
        votes += (await Promise.all(postIds.map((id, i) => castVotes(req, rec, agents, id, prePlans[i]!)))).reduce(
          (a, b) => a + b,
          0,
        );

        // the undecided cases: nominated, then ballots the rules leave undecided with the planned deadline outcome
        const deadlineCases: { id: string; approvals: number; rejections: number; outcome: Outcome }[] = [];
        for (const [k, target] of deadlineTargets.entries()) {
          const i = decisiveTargets.length + k;
          const id = postIds[i]!;
          let cfg: { nominator: number; votes: Map<number, "approve" | "reject"> };
          for (;;) {
            const nominator = rng.int(nSeats);
            const m = new Map<number, "approve" | "reject">();
            for (let s = 0; s < nSeats; s++)
              if (s !== nominator && rng.chance(0.6)) m.set(s, rng.chance(0.5) ? "approve" : "reject");
            const a = 1 + [...m.values()].filter((v) => v === "approve").length;
            const r = [...m.values()].filter((v) => v === "reject").length;
            if (decisive(nSeats, a, r) === null && atDeadline(nSeats, a, r) === target) {
              cfg = { nominator, votes: m };
              break;
            }
          }
          ok(await req("POST", `/posts/${id}/nominate`, { key: seats[cfg.nominator]!.apiKey }), 200, "nominate");
          let approvals = 1;
          let rejections = 0;
          for (const [s, vote] of cfg.votes) {
            if (vote === "approve") approvals++;
            else rejections++;
            const r = ok(
              await req("POST", `/posts/${id}/council`, {
                key: seats[s]!.apiKey,
                body: { vote, reason: "seeded, undecided" },
              }),
              200,
              "ballot",
            );
            expect(r).toMatchObject({ status: "review", approvals, rejections });
          }
          deadlineCases.push({ id, approvals, rejections, outcome: target });
        }

        // a backlog longer than one pull of the consumer (64 events): proposals nominated and left
        // alone, which miss the quorum at the deadline
        const FILLERS = 70;
        const fillers = [...Array(FILLERS).keys()].map(() => ({
          author: unseated(rng, nAgents, seated),
          nominator: rng.int(nSeats),
          pre: randomVotes(rng, nAgents, 0.06),
        }));
        // ten at a time: the backlog is what matters here, not a burst of 70 concurrent writers, which on
        // a loaded machine outlasts the services' call deadline (503) before the test gets to its point
        const fillerIds: string[] = [];
        for (let from = 0; from < fillers.length; from += 10)
          fillerIds.push(
            ...(await Promise.all(
              fillers.slice(from, from + 10).map(async (f, j) => {
                const k = from + j;
                const id = await propose(agents[f.author]!, { title: `Backlog proposal ${k}`, body: PROPOSAL_BODY });
                const n = await castVotes(req, rec, agents, id, f.pre);
                votes += n;
                expect(
                  ok(await req("POST", `/posts/${id}/nominate`, { key: seats[f.nominator]!.apiKey }), 200, "nominate"),
                ).toMatchObject({ status: "review", approvals: 1 });
                return id;
              }),
            )),
          );
        fillerIds.forEach((id, k) => {
          const f = fillers[k]!;
          postIds.push(id);
          authors.push(agents[f.author]!);
          lastPre.push(new Map(f.pre.map((v) => [v.agent, v.votes[v.votes.length - 1]!])));
          deadlineCases.push({ id, approvals: 1, rejections: 0, outcome: atDeadline(nSeats, 1, 0) });
        });

        // close two cases decisively, then stop identity at once: their events may be in flight
        for (const [i, target] of decisiveTargets.entries()) {
          const id = postIds[i]!;
          const nominator = rng.int(nSeats);
          const { ballots } = decisiveBallots(rng, nSeats, nominator, target);
          ok(await req("POST", `/posts/${id}/nominate`, { key: seats[nominator]!.apiKey }), 200, "nominate");
          for (const [j, b] of ballots.entries()) {
            const sent = rec.tick();
            const r = ok(
              await req("POST", `/posts/${id}/council`, {
                key: seats[b.seat]!.apiKey,
                body: { vote: b.vote, reason: "seeded, decisive" },
              }),
              200,
              "ballot",
            );
            const last = j === ballots.length - 1;
            expect(r.status).toBe(last ? target : "review");
            if (last) rec.addClose(id, authors[i]!.agentId, target, sent);
          }
        }
        await sys.stopIdentity();
        const stoppedAt = Date.now();

        const db = new pg.Client({ connectionString: sys.env.DATABASE_URL });
        await db.connect();
        const nc = await connect({ servers: TEST_NATS_URL });
        try {
          const jsm = await nc.jetstreamManager();
          // A delivery in flight when the consumer stopped, never handled, would stay unacknowledged
          // until ack_wait (30 s): a graceful stop must leave none behind.
          const unacked = async () =>
            (await jsm.consumers.info(sys.env.NATS_STREAM!, SAGACITY_DURABLE)).num_ack_pending;
          expect(await unacked()).toBe(0);
          const inFlight = (
            await db.query<{ n: number }>("SELECT count(DISTINCT post_id)::int AS n FROM identity.sagacity_awards")
          ).rows[0]!.n;
          // identity is down: authenticated requests fail
          const down = await req("GET", "/me", { key: agents[0]!.apiKey });
          expect(down.status).toBeGreaterThanOrEqual(500);

          // the deadline passes while identity is down; the council's scheduler closes the rest
          const sent = rec.tick();
          clock.advance(7 * DAY + 60_000);
          await eventually(async () => {
            for (const c of deadlineCases)
              expect({ id: c.id, status: (await sys.council.repo.get(c.id)).status }).toEqual({
                id: c.id,
                status: c.outcome,
              });
          }, 15_000);
          for (const c of deadlineCases) rec.addClose(c.id, authors[postIds.indexOf(c.id)]!.agentId, c.outcome, sent);
          // nobody has awarded them: the events wait in the stream for the durable consumer
          await eventually(async () => {
            const i = await jsm.consumers.info(sys.env.NATS_STREAM!, SAGACITY_DURABLE);
            expect(i.num_pending).toBeGreaterThanOrEqual(deadlineCases.length);
          }, 15_000);
          const awardedPosts = async () =>
            (
              await db.query<{ n: number }>(
                "SELECT count(DISTINCT post_id)::int AS n FROM identity.sagacity_awards WHERE post_id = ANY($1::text[])",
                [deadlineCases.map((c) => c.id)],
              )
            ).rows[0]!.n;
          expect(await awardedPosts()).toBe(0);

          // back on the same port and database; stopped again as soon as it has worked through
          // part of the backlog, and started once more
          await sys.restartIdentity();
          await waitUntil("identity's first award from the backlog", async () => (await awardedPosts()) > 0, {
            timeoutMs: 10_000,
            intervalMs: 2,
          });
          await sys.stopIdentity();
          const midway = await awardedPosts();
          expect(await unacked()).toBe(0);
          // it did stop midway: some of the backlog awarded, some still waiting in the stream
          // (the durable's next pull would deliver it), so the restart below resumes a backlog
          const left = (await jsm.consumers.info(sys.env.NATS_STREAM!, SAGACITY_DURABLE)).num_pending;
          expect({ midway: midway > 0, left: left > 0 }).toEqual({ midway: true, left: true });
          await sys.restartIdentity();
          console.log(
            `[sagacity.test] restart: seed ${seed}, ${nAgents} agents, ${nSeats} seats, ${votes} votes before the closes; ` +
              `${decisiveTargets.length} cases closed just before the stop (${inFlight} already awarded when it stopped), ` +
              `${deadlineCases.length} closed by the scheduler while down (${deadlineCases.filter((c) => c.outcome === "adopted").length} adopted), ` +
              `${midway} of them awarded when the second stop came, ${left} events still in the stream for it; down ${Date.now() - stoppedAt} ms in all`,
          );

          // flips and new votes after every close, as soon as the gateway reaches identity again
          await eventually(
            async () => expect((await req("GET", "/me", { key: agents[0]!.apiKey })).status).toBe(200),
            30_000,
          );
          let after = 0;
          const afterPlans = postIds.map((_, i) => randomVotes(rng, nAgents, i < nPosts ? 0.4 : 0.05, lastPre[i]));
          const counts = await Promise.all(postIds.map((id, i) => castVotes(req, rec, agents, id, afterPlans[i]!)));
          after = counts.reduce((a, b) => a + b, 0);
          expect(rec.closes).toHaveLength(postIds.length);
          await expectSagacity(req, agents, rec, `restart (${after} votes after the closes)`);

          // two identity instances on one durable consumer, processed_events deleted, two replays at once
          await sys.addIdentityInstance();
          await replayThreeWays(
            nc,
            db,
            sys.env.NATS_STREAM!,
            sys.env.APS_SUBJECT_PREFIX!,
            rec.closes,
            "restart, two identity instances",
          );
          await expectSagacity(req, agents, rec, "restart after replays");
        } finally {
          await nc.close();
          await db.end();
        }
        console.log(`[sagacity.test] restart: part 3 took ${Date.now() - t0} ms`);
      },
      TIMEOUT_MS,
    );
  },
);

if (!hasReal) {
  describe("Sagacity redelivery, replay and identity restart", () => {
    it.skip("NEEDS real PostgreSQL + NATS (skipped: not reachable here)", () => undefined);
  });
}
