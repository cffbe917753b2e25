import { randomUUID } from "node:crypto";
import { Agent, request, type ClientRequest } from "node:http";
import { eventually, pause } from "@aps/testkit";

/**
 * A steady load on the API: N requests a second (open model: a request is sent when it is due,
 * whether or not the earlier ones have answered) of mixed reads and writes by joined agents —
 * proposals, comments, votes, single reads and lists — each outcome counted. A request fails
 * when it is answered 5xx, its connection fails or it passes its timeout. One retry only, the one
 * HTTP/1.1 keep-alive asks of every client (RFC 9112 §9.3.1; Node's `req.reusedSocket`): a request
 * reset on a reused keep-alive connection before any answer — the server closed that idle
 * connection as the request left, so it never read it — is sent once more on a new connection,
 * writes with the same Idempotency-Key (each write carries one), and counted as `resetRetried`.
 * Every acknowledged write is kept, to be read back afterwards ({@link verifyWrites}).
 */

/** An agent of the load: its id and API key (`POST /v1/join`). */
export interface LoadAgent {
  agentId: string;
  apiKey: string;
}

/** The operations of the mix. */
export type Op = "post" | "comment" | "vote" | "read" | "list";
/** Share of each operation in the mix (they sum to 1). */
export const MIX: Readonly<Record<Op, number>> = { read: 0.25, list: 0.2, vote: 0.2, comment: 0.2, post: 0.15 };

/** One answered or failed request. */
export interface Outcome {
  op: Op;
  /** HTTP status, absent when there was no answer. */
  status?: number;
  /** Why it failed without an answer (connection error, timeout). */
  error?: string;
  /** It was reset on a reused keep-alive connection before any answer, and sent once more. */
  resetRetried?: true;
  /** A 5xx answer's problem `code` and `detail` (RFC 9457), to tell which dependency failed. */
  problem?: string;
  /** Sent at (ms since the epoch) and its duration (ms). */
  at: number;
  ms: number;
}

/** The writes the API acknowledged, to read back. */
export interface AckedWrites {
  /** Post id → its author and title. */
  posts: Map<string, { author: string; title: string }>;
  /** Post id → ids of the comments acknowledged on it. */
  comments: Map<string, string[]>;
  /** Post id → the votes acknowledged on it (`for` +1, `against` −1), by voter. */
  votes: Map<string, Map<string, 1 | -1>>;
  /** Posts with a vote whose outcome is unknown (failed request): not checked for counts. */
  uncertain: Set<string>;
}

/** Whether an outcome counts as failed: 5xx, no answer, or a timeout. */
export const failed = (o: Outcome) => o.status === undefined || o.status >= 500;

type Answer = { status?: number; body?: any; error?: string; resetRetried?: true };
/** An answer and when its request was first sent (ms since the epoch). */
type Sent = Answer & { sentAt: number };

/** A load on one API at a steady rate (see the module doc). */
export class LoadGenerator {
  readonly outcomes: Outcome[] = [];
  readonly acked: AckedWrites = { posts: new Map(), comments: new Map(), votes: new Map(), uncertain: new Set() };
  private readonly agent: Agent;
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private sent = 0;
  private t0 = 0;
  private n = 0;
  private rate: number;
  /** When each request of the mix was sent (ms since the epoch), for {@link carriedRate}. */
  private readonly sentAt: number[] = [];

  /**
   * `baseUrl`: the API's `/v1` URL; `agents`: who writes (≥ 2, so a vote is never on one's own
   * post); `rate` in requests/s (default 50); `timeoutMs`: a request's bound (default 30,000 ms);
   * `keepAlive` (default true): reuse connections, as a proxy in front of the gateway does.
   */
  constructor(
    private readonly baseUrl: string,
    private readonly agents: readonly LoadAgent[],
    private readonly opts: { rate?: number; timeoutMs?: number; keepAlive?: boolean } = {},
  ) {
    if (agents.length < 2) throw new Error("the load needs at least 2 agents");
    this.rate = opts.rate ?? 50;
    this.agent = new Agent({ keepAlive: opts.keepAlive ?? true, maxSockets: 256 });
  }

  /** Sends once, and once more on a new connection when it was reset on a reused one before any answer (see the module doc). */
  private async call(method: string, path: string, key: string | undefined, body?: unknown): Promise<Sent> {
    const idempotencyKey = method === "POST" ? randomUUID() : undefined;
    const sentAt = Date.now();
    this.sentAt.push(sentAt);
    const first = await this.send(method, path, key, body, idempotencyKey, this.agent);
    if (!first.reusedReset) return { ...first.answer, sentAt };
    const again = await this.send(method, path, key, body, idempotencyKey, false);
    return { ...again.answer, resetRetried: true, sentAt };
  }

  /** One request on `agent`'s pooled connections (`false`: a new connection of its own); whether it was reset on a reused one before any answer. */
  private send(
    method: string,
    path: string,
    key: string | undefined,
    body: unknown,
    idempotencyKey: string | undefined,
    agent: Agent | false,
  ): Promise<{ answer: Answer; reusedReset: boolean }> {
    const url = new URL(`${this.baseUrl}${path}`);
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise((done) => {
      let answered = false;
      const resolve = (answer: Answer) => done({ answer, reusedReset: false });
      const req: ClientRequest = request(
        url,
        {
          method,
          agent,
          headers: {
            ...(key ? { authorization: `Bearer ${key}` } : {}),
            ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
            ...(data ? { "content-type": "application/json", "content-length": data.length } : {}),
          },
        },
        (res) => {
          answered = true;
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let parsed: unknown;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              parsed = text;
            }
            resolve({ status: res.statusCode!, body: parsed });
          });
          res.on("error", (e) => resolve({ error: e.message }));
        },
      );
      req.setTimeout(this.opts.timeoutMs ?? 30_000, () => req.destroy(new Error("timeout")));
      req.on("error", (e: NodeJS.ErrnoException) =>
        done({
          answer: { error: e.code ?? e.message },
          reusedReset: req.reusedSocket && !answered && e.code === "ECONNRESET",
        }),
      );
      req.end(data);
    });
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(Math.random() * xs.length)]!;
  }

  private op(): Op {
    let r = Math.random();
    for (const [op, share] of Object.entries(MIX) as Array<[Op, number]>) if ((r -= share) < 0) return op;
    return "read";
  }

  /** One request of the mix; its outcome recorded, its acknowledged write kept. */
  private async one(): Promise<void> {
    const posts = [...this.acked.posts.keys()];
    let op = this.op();
    if (posts.length === 0) op = "post";
    const me = this.pick(this.agents);
    let a: Sent;
    const n = ++this.n;
    if (op === "post") {
      const title = `Rehearsal proposal ${n}`;
      a = await this.call("POST", "/posts", me.apiKey, {
        title,
        body: `Load request ${n}.`,
        is_arch_design: n % 2 === 0,
      });
      if (a.status === 201) this.acked.posts.set(a.body.id, { author: me.agentId, title });
    } else if (op === "comment") {
      const post = this.pick(posts);
      a = await this.call("POST", `/posts/${post}/comments`, me.apiKey, { body: `Comment ${n}.` });
      if (a.status === 201) this.acked.comments.set(post, [...(this.acked.comments.get(post) ?? []), a.body.id]);
    } else if (op === "vote") {
      const post = this.pick(posts);
      const votes = this.acked.votes.get(post) ?? new Map<string, 1 | -1>();
      const voter = this.agents.find((x) => x.agentId !== this.acked.posts.get(post)!.author && !votes.has(x.agentId));
      if (!voter) return this.one();
      const vote: 1 | -1 = n % 3 === 0 ? -1 : 1;
      votes.set(voter.agentId, vote); // claimed before the answer: one vote per voter and post
      this.acked.votes.set(post, votes);
      a = await this.call("POST", `/posts/${post}/vote`, voter.apiKey, { vote });
      if (a.status !== 200) {
        votes.delete(voter.agentId);
        if (a.status === undefined || a.status >= 500) this.acked.uncertain.add(post);
      }
    } else if (op === "read") a = await this.call("GET", `/posts/${this.pick(posts)}`, n % 2 ? me.apiKey : undefined);
    else a = await this.call("GET", "/posts?sort=new&limit=20", n % 2 ? me.apiKey : undefined);
    this.outcomes.push({
      op,
      // the same instant as sentBetween's, so a window counts a request as sent and answered alike
      at: a.sentAt,
      ms: Date.now() - a.sentAt,
      ...(a.status !== undefined ? { status: a.status } : {}),
      ...(a.error ? { error: a.error } : {}),
      ...(a.resetRetried ? { resetRetried: true as const } : {}),
      ...(a.status !== undefined && a.status >= 500
        ? { problem: `${a.body?.code ?? "?"}: ${String(a.body?.detail ?? a.body).slice(0, 200)}` }
        : {}),
    });
  }

  /** Starts sending: every 10 ms, as many requests as are due at `rate` since the start. */
  start(): void {
    this.t0 = Date.now();
    this.timer = setInterval(() => {
      const due = Math.floor(((Date.now() - this.t0) * this.rate) / 1000);
      for (; this.sent < due; this.sent++) {
        const p = this.one().finally(() => this.inFlight.delete(p));
        this.inFlight.add(p);
      }
    }, 10);
  }

  /** The rate it sends at, requests/s. */
  get requestsPerSecond(): number {
    return this.rate;
  }

  /** Sends at `rate` requests/s from now on (the requests already due stay sent). */
  setRate(rate: number): void {
    this.rate = rate;
    this.t0 = Date.now();
    this.sent = 0;
  }

  /** How many requests were sent in [since, until) (ms since the epoch), answered or not. */
  sentBetween(since: number, until: number): number {
    return this.sentAt.filter((t) => t >= since && t < until).length;
  }

  /** Stops sending and resolves once every request sent has its outcome. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
    this.agent.destroy();
  }

  /** The outcomes from `since` (ms since the epoch) on: total, failed, by status/error, by op. */
  summary(
    since = 0,
    until = Infinity,
  ): { total: number; failed: number; byAnswer: Record<string, number>; failures: Outcome[]; resetRetried: number } {
    const os = this.outcomes.filter((o) => o.at >= since && o.at < until);
    const byAnswer: Record<string, number> = {};
    for (const o of os)
      byAnswer[`${o.op} ${o.status ?? o.error}`] = (byAnswer[`${o.op} ${o.status ?? o.error}`] ?? 0) + 1;
    const failures = os.filter(failed);
    const resetRetried = os.filter((o) => o.resetRetried).length;
    return { total: os.length, failed: failures.length, byAnswer, failures: failures.slice(0, 20), resetRetried };
  }

  /**
   * One line for an assertion, so a failed run's one-line summary says what failed: "`failed` of
   * `total` requests failed" followed by each kind of failure (op, status or error, problem code)
   * with its count, most frequent first, then how many acknowledged writes were not read back.
   */
  verdict(since = 0, until = Infinity, unread: readonly string[] = []): string {
    const os = this.outcomes.filter((o) => o.at >= since && o.at < until && failed(o));
    const kinds = new Map<string, number>();
    for (const o of os) {
      const k = `${o.op} ${o.status ?? o.error}${o.problem ? ` ${o.problem.slice(0, 60)}` : ""}`;
      kinds.set(k, (kinds.get(k) ?? 0) + 1);
    }
    const listed = [...kinds].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n}× ${k}`);
    const total = this.outcomes.filter((o) => o.at >= since && o.at < until).length;
    return `${os.length} of ${total} requests failed${listed.length ? ` (${listed.join("; ")})` : ""}; ${unread.length} acknowledged writes not read back${unread.length ? ` (${unread.slice(0, 3).join("; ")})` : ""}`;
  }
}

/** One window of {@link carriedRate}: its rate, requests sent, failed and slow (or unanswered) ones. */
export interface RateWindow {
  rate: number;
  sent: number;
  failed: number;
  slow: number;
}

/**
 * The rate (requests/s) at which the system answers `gen`'s load within its latency objective:
 * a window of `windowMs` with no failed request and at most `maxSlowShare` of the requests sent
 * in it answered later than `slowMs` (or not yet) — the chart's objective is 1 s
 * (`slo.latencyThresholdSeconds`). It starts at the generator's rate and halves it, not below
 * `minRate`, after each window that misses (then lets the backlog drain for `settleMs` before
 * the next window), at most `maxWindows` windows; the generator is left
 * at the rate found (the last one tried when none was carried). The rehearsal's roll is judged at
 * that rate: its claim is that a rollout drops nothing, which a host too slow for the nominal rate
 * would hide behind its own overload; capacity is `npm run bench`'s (docs/operations/rehearsal.md
 * "The rate").
 */
export async function carriedRate(
  gen: LoadGenerator,
  opts: {
    windowMs?: number;
    slowMs?: number;
    maxSlowShare?: number;
    minRate?: number;
    maxWindows?: number;
    settleMs?: number;
  } = {},
): Promise<{ rate: number; carried: boolean; windows: RateWindow[] }> {
  const {
    windowMs = 15_000,
    slowMs = 1_000,
    maxSlowShare = 0.1,
    minRate = 10,
    maxWindows = 3,
    settleMs = 5_000,
  } = opts;
  const windows: RateWindow[] = [];
  for (;;) {
    const w0 = Date.now();
    await pause(windowMs + slowMs, "a window of the load at one rate, and the latency bound of its last requests");
    const w1 = w0 + windowMs;
    const answered = gen.outcomes.filter((o) => o.at >= w0 && o.at < w1);
    const sent = gen.sentBetween(w0, w1);
    const failures = answered.filter(failed).length;
    const fast = answered.filter((o) => !failed(o) && o.ms <= slowMs).length;
    const w = { rate: gen.requestsPerSecond, sent, failed: failures, slow: sent - fast - failures };
    windows.push(w);
    const carried = sent > 0 && w.failed === 0 && w.slow <= maxSlowShare * sent;
    if (carried || windows.length >= maxWindows || w.rate <= minRate)
      return { rate: gen.requestsPerSecond, carried, windows };
    gen.setRate(Math.max(minRate, Math.floor(w.rate / 2)));
    await pause(settleMs, "the backlog of the higher rate drains before the next window");
  }
}

/**
 * {@link verifyWrites} until nothing is missing (a write's read model may lag its answer: the
 * forum's projections, a replica's cache) or `timeoutMs` (default 120 s, stretched by
 * TEST_TIME_SCALE) has passed; resolves what is still missing (empty: all there).
 */
export async function verifyWritesEventually(
  gen: LoadGenerator,
  baseUrl: string,
  timeoutMs = 120_000,
): Promise<string[]> {
  let unread: string[] = [];
  await eventually(
    async () => {
      unread = await verifyWrites(gen, baseUrl);
      if (unread.length > 0) throw new Error(`${unread.length} writes not read back yet`);
    },
    timeoutMs,
    1000,
  ).catch(() => undefined);
  return unread;
}

/**
 * Reads back every acknowledged write through `baseUrl` (anonymous GETs): each post (200, its
 * title), each post's comments (every acknowledged id among them, page by page) and, unless a
 * vote on it failed, its vote counts (`for`, `against` as acknowledged). Resolves with what is
 * missing or different, one line each (empty: all there).
 */
export async function verifyWrites(gen: LoadGenerator, baseUrl: string): Promise<string[]> {
  const get = async (path: string): Promise<any> => {
    const r = await fetch(`${baseUrl}${path}`);
    if (r.status !== 200) throw new Error(`GET ${path}: ${r.status}`);
    return r.json();
  };
  const wrong: string[] = [];
  for (const [id, p] of gen.acked.posts) {
    const post = await get(`/posts/${id}`).catch((e: Error) => ({ error: e.message }));
    if (post.error || post.title !== p.title) {
      wrong.push(`post ${id}: ${post.error ?? `title ${post.title}`}`);
      continue;
    }
    const votes = gen.acked.votes.get(id);
    if (votes && !gen.acked.uncertain.has(id)) {
      const want = {
        for: [...votes.values()].filter((v) => v === 1).length,
        against: [...votes.values()].filter((v) => v === -1).length,
      };
      if (post.votes.for !== want.for || post.votes.against !== want.against)
        wrong.push(`post ${id}: votes ${JSON.stringify(post.votes)}, acknowledged ${JSON.stringify(want)}`);
    }
    const comments = gen.acked.comments.get(id) ?? [];
    if (comments.length === 0) continue;
    const seen = new Set<string>();
    for (let cursor: string | null = null; ;) {
      const page: any = await get(
        `/posts/${id}/comments?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      for (const c of page.items) seen.add(c.id);
      cursor = page.nextCursor;
      if (!cursor) break;
    }
    for (const c of comments) if (!seen.has(c)) wrong.push(`post ${id}: comment ${c} missing`);
  }
  return wrong;
}
