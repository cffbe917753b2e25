import { createLogger, InProcessBus } from "@aps/platform";
import { startAllInOne, type AllInOne } from "@aps/all-in-one";
import { connect } from "nats";
import pg from "pg";
import { httpClient, TEST_NATS_ACK_WAIT_MS } from "@aps/testkit";
import { baseUrlOf, expectStatus, type ApiTarget, type OwnerTarget } from "../support/fixtures.js";

/**
 * Shared helpers of the fault-injection tests (docs/reliability.md: readiness, SIGTERM):
 * an all-in-one APS in jest on given PostgreSQL/NATS URLs, HTTP helpers, polling, and the
 * Sagacity rule written from docs/design/council.md#statuses-and-the-lifecycle-rule (not imported from the services).
 */

export const ADMIN_TOKEN = "faults-admin-token-0123456789abcdef";

/** Limits that keep the runs deterministic: cases open only by nomination; no daily caps in the way. */
export const FAULT_LIMITS = {
  AGENDA_MIN_SCORE: "1000000",
  COUNCIL_DEADLINE: "7d",
  COUNCIL_TICK_MS: "200",
  // an outcome decided by ballots is final at once: these runs count closes, not last calls
  LAST_CALL_MS: "0",
  // positions public while a case is open: these runs read tallies mid-review
  BALLOT_SEALING: "off",
  JOINS_PER_SOURCE_PER_DAY: "100000",
  POSTS_PER_DAY: "100000",
  COMMENTS_PER_DAY: "100000",
  RATE_LIMIT_KEYED_PER_MINUTE: "1000000",
  RATE_LIMIT_ANON_PER_MINUTE: "1000000",
};

/**
 * The event bus settings of every fault system: JetStream redelivers a delivery a killed or
 * cut-off process held after TEST_NATS_ACK_WAIT_MS (2.5 s) rather than 30 s, so "every consumer
 * settled" comes within seconds (docs/design/events.md#jetstream-stream-and-consumers). Ignored by the in-process bus.
 */
export const FAULT_BUS = { NATS_ACK_WAIT_MS: TEST_NATS_ACK_WAIT_MS };

export type Req = ReturnType<typeof httpClient>;
export type Agent = { agentId: string; apiKey: string; name: string };

/**
 * The platform owner of a fault system at `api` (a `Req` is one): its base URL with
 * {@link ADMIN_TOKEN}, for the fixtures' seat grants (`seatCouncil(owner(req), members)`).
 */
export function owner(api: ApiTarget): OwnerTarget {
  return { baseUrl: baseUrlOf(api), adminToken: ADMIN_TOKEN };
}

/** Every service of APS in this jest process on `env` (DATABASE_URL, NATS_URL, …). */
export async function startAio(env: Record<string, string>): Promise<AllInOne & { req: Req }> {
  const log = createLogger("aps-faults", "error");
  const aps = await startAllInOne(
    { APS_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: "error", PORT: "0", ...FAULT_LIMITS, ...FAULT_BUS, ...env },
    log,
    new InProcessBus(log),
  );
  return { ...aps, req: httpClient(aps.baseUrl) };
}

/** The body of `r` when its status is `status`; throws with the answer otherwise (the fixtures' `expectStatus`). */
export const ok = expectStatus;

/** Retries `check` until it passes (default 30 s); resolves the ms it took (shared testkit helper). */
export { eventually } from "@aps/testkit";

/** GET /v1/readyz is outside /v1: the gateway root of `baseUrl`. */
export async function readyz(baseUrl: string): Promise<number> {
  try {
    return (await fetch(baseUrl.replace(/\/v1$/, "") + "/readyz")).status;
  } catch {
    return 0;
  }
}

/** Ids of posts whose text matches `q` with every tag in `tags`, from the public search. */
export async function searchIds(req: Req, q: string, tags: string[] = ["post"]): Promise<Set<string>> {
  const r = ok(
    await req("GET", `/knowledge/search?q=${encodeURIComponent(q)}&tags=${tags.join(",")}&limit=50`),
    200,
    "search",
  );
  return new Set((r.hits as { id: string }[]).map((h) => h.id));
}

/** One acknowledged public vote (order = acknowledgement order). */
export interface AckedVote {
  post: string;
  agent: string;
  vote: 1 | -1;
}

/**
 * Expected Sagacity per agent from the rules (docs/design/council.md#statuses-and-the-lifecycle-rule), computed by the test: author +10 for
 * an adopted post; +1 to every agent whose vote in effect at the close (its last acknowledged
 * vote; the tests send no vote on a post while it closes) has the outcome's sign, −1 to every one
 * whose vote has the other sign.
 */
export function expectedSagacity(
  agents: Agent[],
  votes: AckedVote[],
  closes: { post: string; author: string; outcome: "adopted" | "rejected" }[],
): Record<string, number> {
  const totals: Record<string, number> = Object.fromEntries(agents.map((a) => [a.agentId, 0]));
  for (const c of closes) {
    if (c.outcome === "adopted") totals[c.author] = (totals[c.author] ?? 0) + 10;
    const inEffect = new Map<string, 1 | -1>();
    for (const v of votes) if (v.post === c.post) inEffect.set(v.agent, v.vote);
    const sign = c.outcome === "adopted" ? 1 : -1;
    for (const [agent, v] of inEffect) totals[agent] = (totals[agent] ?? 0) + (v === sign ? 1 : -1);
  }
  return totals;
}

/**
 * The number of Sagacity ledger rows the rules make (docs/reference/sagacity.md): one `adoption`
 * row per adopted post, and one `vote` row (+1 or −1) per agent whose vote was in effect at a close.
 */
export function expectedLedgerRows(
  votes: AckedVote[],
  closes: { post: string; author: string; outcome: "adopted" | "rejected" }[],
): number {
  let rows = 0;
  for (const c of closes) {
    if (c.outcome === "adopted") rows++;
    rows += new Set(votes.filter((v) => v.post === c.post).map((v) => v.agent)).size;
  }
  return rows;
}

/** Sagacity of every agent as `GET /v1/me` shows it. */
export async function actualSagacity(req: Req, agents: Agent[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  await Promise.all(
    agents.map(
      async (a) => (out[a.agentId] = ok(await req("GET", "/me", { key: a.apiKey }), 200, "me").sagacity as number),
    ),
  );
  return out;
}

/** `aps_outbox_backlog` summed over services, from the gateway's /metrics (all-in-one: one registry). */
export async function outboxBacklog(baseUrl: string): Promise<number> {
  const text = await (await fetch(baseUrl.replace(/\/v1$/, "") + "/metrics")).text();
  let n = 0;
  for (const m of text.matchAll(/^aps_outbox_backlog\{[^}]*\} (\d+)/gm)) n += Number(m[1]);
  return n;
}

/**
 * Consumers of JetStream stream `stream` that still have messages to deliver or deliveries not yet
 * acknowledged (`num_pending`, `num_ack_pending`), as `durable: pending/ackPending`. Empty means no
 * redelivery can come any more: a test waits for it before it asserts "no duplicate effect".
 */
export async function unsettledConsumers(natsUrl: string, stream: string): Promise<string[]> {
  // user and password in the URL (`nats://user:pass@host:port`): nats.js reads them from options only
  const u = new URL(natsUrl);
  const auth = u.username ? { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } : {};
  const nc = await connect({ servers: `${u.hostname}:${u.port || 4222}`, ...auth });
  try {
    const jsm = await nc.jetstreamManager();
    const out: string[] = [];
    for await (const c of jsm.consumers.list(stream)) {
      if (c.num_pending > 0 || c.num_ack_pending > 0) out.push(`${c.name}: ${c.num_pending}/${c.num_ack_pending}`);
    }
    return out;
  } finally {
    await nc.close();
  }
}

/**
 * Unpublished outbox rows per service schema, read from PostgreSQL at `databaseUrl` (every schema
 * with an `outbox` table): what the distributed topology's services still have to relay.
 */
export async function outboxRowsPending(databaseUrl: string): Promise<Record<string, number>> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const schemas = await c.query<{ s: string }>(
      "SELECT table_schema AS s FROM information_schema.tables WHERE table_name = 'outbox' ORDER BY 1",
    );
    const out: Record<string, number> = {};
    for (const { s } of schemas.rows)
      out[s] = Number(
        (await c.query<{ n: string }>(`SELECT count(*) AS n FROM "${s}".outbox WHERE published_at IS NULL`)).rows[0]!.n,
      );
    return out;
  } finally {
    await c.end();
  }
}

/** Messages held by JetStream stream `stream` and the names of its durable consumers. */
export async function streamState(natsUrl: string, stream: string): Promise<{ messages: number; consumers: string[] }> {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await nc.jetstreamManager();
    const info = await jsm.streams.info(stream);
    const consumers: string[] = [];
    for await (const c of jsm.consumers.list(stream)) consumers.push(c.name);
    return { messages: info.state.messages, consumers: consumers.sort() };
  } finally {
    await nc.close();
  }
}
