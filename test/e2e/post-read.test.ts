import { createServer, type Server } from "node:http";
import pg from "pg";
import type { AddressInfo } from "node:net";
import { createLogger, InProcessBus, serviceClient, type EventBus } from "@aps/platform";
import { startAllInOne, type AllInOne } from "@aps/all-in-one";
import { createApp, loadSkill } from "@aps/gateway";
import {
  createTestDatabase,
  deleteTestStream,
  eventually,
  hasPostgres,
  httpClient,
  TEST_NATS_URL,
  uniqueBusNames,
  type TestDatabase,
} from "@aps/testkit";
import { grantSeat, joinAgent, propose } from "../support/fixtures.js";
import { TEST_RATE_LIMITS } from "../support/system.js";
import {
  council as councilProto,
  forum as forumProto,
  identity as identityProto,
  knowledge as knowledgeProto,
} from "@aps/proto";

/**
 * One read of a post (docs/design/council.md#the-forums-projection-of-the-case): `GET /v1/posts/{id}` of a post whose
 * case has ballots from several councillors looks the councillors and authors up in ONE identity
 * call (`GetAgents`), not one `GetAgent` per councillor plus `GetVerifications`, and reads the post
 * with its forum timeline AND its Council case in one forum call (`GetPost`: the forum's projection
 * of the case), with no council call. A council write answers only once that projection has
 * reached it (read-your-writes). The gRPC calls are counted in the gateway's clients, in front of
 * the real services (real PostgreSQL and NATS).
 */
const real = await hasPostgres();
if (!real) console.warn("[post-read.test] NO PostgreSQL: the post-read test is SKIPPED");
const log = createLogger("post-read-test", "warn");
const ADMIN = "post-read-test-admin-0123456789abcdef";

/** Wraps a client so that every method call is counted by name in `calls`. */
function counting<T extends object>(client: T, calls: Map<string, number>): T {
  return new Proxy(client, {
    get(target, prop, receiver) {
      const v: unknown = Reflect.get(target, prop, receiver);
      if (typeof v !== "function" || typeof prop !== "string" || prop === "close") return v;
      return (...args: unknown[]) => {
        calls.set(prop, (calls.get(prop) ?? 0) + 1);
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

(real ? describe : describe.skip)("GET /v1/posts/{id}: one batched identity lookup", () => {
  let aps: AllInOne;
  let bus: EventBus;
  let db: TestDatabase;
  let names: { stream: string; prefix: string };
  let server: Server;
  const calls = {
    identity: new Map<string, number>(),
    forum: new Map<string, number>(),
    council: new Map<string, number>(),
  };
  let counted: ReturnType<typeof httpClient>;
  let env: Record<string, string>;
  /** The first test's post, its author's key and the case's figures, for the upgrade test. */
  let read: { id: string; authorKey: string } | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
    names = uniqueBusNames();
    bus = new InProcessBus(log);
    env = {
      APS_ADMIN_TOKEN: ADMIN,
      LOG_LEVEL: "warn",
      PORT: "0",
      ...TEST_RATE_LIMITS,
      JOINS_PER_SOURCE_PER_DAY: "1000",
      // the deciding ballot closes the case at once: this suite reads the decision it made
      // (no last call, docs/reference/council.md "Last call")
      LAST_CALL_MS: "0",
      BALLOT_SEALING: "off", // this suite reads the tally mid-review (docs/reference/council.md "Sealed ballots")
      DATABASE_URL: db.url,
      NATS_URL: TEST_NATS_URL,
      NATS_STREAM: names.stream,
      APS_SUBJECT_PREFIX: names.prefix,
    };
    aps = await startAllInOne(env, log, bus);
    const caller = { name: "gateway", token: aps.internalToken! }; // the all-in-one's gRPC ports check callers
    const app = createApp({
      identity: counting(
        serviceClient(identityProto.IdentityServiceDefinition, aps.grpcAddrs.IDENTITY_GRPC_ADDR, { caller }),
        calls.identity,
      ),
      forum: counting(
        serviceClient(forumProto.ForumServiceDefinition, aps.grpcAddrs.FORUM_GRPC_ADDR, { caller }),
        calls.forum,
      ),
      council: counting(
        serviceClient(councilProto.CouncilServiceDefinition, aps.grpcAddrs.COUNCIL_GRPC_ADDR, { caller }),
        calls.council,
      ),
      knowledge: serviceClient(knowledgeProto.KnowledgeServiceDefinition, aps.grpcAddrs.KNOWLEDGE_GRPC_ADDR, {
        caller,
      }),
      skill: loadSkill(),
      log,
    });
    server = await new Promise((resolve) => {
      const s = createServer(app).listen(0, "127.0.0.1", () => resolve(s));
    });
    counted = httpClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
  });
  afterAll(async () => {
    await new Promise((r) => server?.close(r));
    await aps?.stop();
    if (names) await deleteTestStream(names.stream);
    await db?.drop();
  });

  it("names three councillors' ballots and the authors' badges with one GetAgents call, the post, timeline and case with one GetPost", async () => {
    const owner = { baseUrl: aps.baseUrl, adminToken: ADMIN };
    const [chief, c1, c2, c3, author] = await Promise.all(
      ["chief", "c1", "c2", "c3", "author"].map((n) => joinAgent(aps, `post-read ${n}`)),
    );
    await grantSeat(owner, chief!, "chief");
    for (const c of [c1!, c2!, c3!]) await grantSeat(owner, c, "councillor");
    const id = await propose(author!);
    const api = httpClient(aps.baseUrl);
    expect((await api("POST", `/posts/${id}/nominate`, { key: c1!.apiKey })).status).toBe(200);

    // Read-your-writes: a ballot through the counted gateway answers once the forum's projection
    // holds it, so the very next read (one forum call, no council call) shows it.
    for (const m of Object.values(calls)) m.clear();
    const w = await counted("POST", `/posts/${id}/council`, {
      key: c2!.apiKey,
      body: { vote: "reject", reason: "Not now." },
    });
    expect(w.status).toBe(200);
    expect(calls.council.get("castBallot")).toBe(1);
    expect(calls.forum.get("getCaseRevision")).toBeGreaterThanOrEqual(1);
    for (const m of Object.values(calls)) m.clear();
    const open = await counted("GET", `/posts/${id}`, { key: c2!.apiKey });
    expect(open.status).toBe(200);
    expect(open.body.status).toBe("review");
    expect(open.body.council).toMatchObject({ approvals: 1, rejections: 1 });
    expect((open.body.councilBallots as unknown[]).length).toBe(2);
    expect(Object.fromEntries(calls.forum)).toEqual({ getPost: 1 });
    expect(Object.fromEntries(calls.council)).toEqual({});

    expect(
      (await api("POST", `/posts/${id}/council`, { key: c3!.apiKey, body: { vote: "reject", reason: "Not now." } }))
        .status,
    ).toBe(200);

    for (const m of Object.values(calls)) m.clear();
    const r = await counted("GET", `/posts/${id}`);
    expect(r.status).toBe(200);
    const ballots = r.body.councilBallots as { councillor: { agentId: string; name: string } }[];
    expect(ballots.map((b) => b.councillor.name).sort()).toEqual(["post-read c1", "post-read c2", "post-read c3"]);
    expect((r.body.author as { name: string }).name).toBe("post-read author");
    // the decision, from the forum's projection of the case (the effective status computed there)
    expect(r.body.status).toBe("rejected");
    // one batched identity lookup for every name and badge (before: GetAgent × 3 + GetVerifications)
    expect(Object.fromEntries(calls.identity)).toEqual({ getAgents: 1 });
    // the post, its comments, its forum timeline and its case in one forum call (before: + ListPostEvents)
    expect(Object.fromEntries(calls.forum)).toEqual({ getPost: 1 });
    // … and no council call: the case is the forum's projection (before: council GetCase)
    expect(Object.fromEntries(calls.council)).toEqual({});
    read = { id, authorKey: author!.apiKey };
    console.log(
      `[post-read] GET /v1/posts/{id}: forum ${JSON.stringify(Object.fromEntries(calls.forum))}, council ${JSON.stringify(
        Object.fromEntries(calls.council),
      )}, identity ${JSON.stringify(Object.fromEntries(calls.identity))}`,
    );
  });

  it("upgrade: a case from before revisions gets its summary once at start-up, and the read shows it again (docs/design/council.md#the-forums-projection-of-the-case)", async () => {
    expect(read).toBeDefined();
    const { id, authorKey } = read!;
    // as the release before leaves it: the case at revision 0, no projection in the forum
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    try {
      await pool.query("UPDATE council.cases SET revision = 0 WHERE post_id = $1", [id]);
      await pool.query("DELETE FROM forum.case_projections WHERE post_id = $1", [id]);
      const bare = await counted("GET", `/posts/${id}`, { key: authorKey }); // keyed: never cached
      expect(bare.body.council).toBeNull();
      // the upgrade: the services start again on the same data
      await aps.stop();
      bus = new InProcessBus(log);
      aps = await startAllInOne(env, log, bus);
      const api = httpClient(aps.baseUrl);
      await eventually(async () => {
        const r = await api("GET", `/posts/${id}`, { key: authorKey });
        expect(r.body.council).toMatchObject({ approvals: 1, rejections: 2 });
        expect(r.body.status).toBe("rejected");
      }, 10_000);
      const revisions = await pool.query<{ revision: string }>(
        "SELECT (SELECT revision FROM council.cases WHERE post_id = $1) AS revision UNION ALL SELECT revision FROM forum.case_projections WHERE post_id = $1",
        [id],
      );
      expect(revisions.rows.map((r) => Number(r.revision))).toEqual([1, 1]);
    } finally {
      await pool.end();
    }
  });
});
