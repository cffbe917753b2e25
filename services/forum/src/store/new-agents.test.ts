import { createLogger, migrate, openDatabase, PLATFORM_MIGRATIONS_DIR, type Database } from "@aps/platform";
import type { forum } from "@aps/proto";
import { ADMIN_DATABASE_URL, createTestDatabase, hasPostgres, SetClock, type TestDatabase } from "@aps/testkit";
import { tooNewToCount, UNCOUNTED_SOURCE } from "../agent-age.js";
import { forumHandlers } from "../grpc/handlers.js";
import { ForumRepository } from "./repository.js";
import { FlagStore } from "./flags.js";
import { FUNCTIONS_DIR, MIGRATIONS_DIR } from "./paths.js";

/**
 * New agents (docs/design/identity-and-abuse.md#new-agents): with MIN_AGENT_AGE_MS set, a +1 of an
 * agent younger than it is recorded and shown but counts toward no agenda score, and its flag
 * carries no weight — through the forum's own gRPC handlers on the real PostgreSQL, the join
 * instant as the gateway sends it. A vote is judged when it is cast: the same +1 does not start
 * counting when its voter comes of age, a new one does.
 */
const log = createLogger("forum-new-agents-test", "silent");
const pgUp = await hasPostgres();
if (!pgUp) console.warn(`\n!! new-agents.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — the suite is SKIPPED.\n`);

const HOUR = 3_600_000;

describe("tooNewToCount", () => {
  const now = new Date("2026-05-01T12:00:00Z");
  const joined = (ms: number) => new Date(now.getTime() - ms).toISOString();

  it("holds an agent younger than the minimum from a network source, not one at or past it", () => {
    expect(tooNewToCount(joined(HOUR - 1), "203.0.113.0/24", now, HOUR)).toBe(true);
    expect(tooNewToCount(joined(HOUR), "203.0.113.0/24", now, HOUR)).toBe(false);
  });

  it("is off at 0, for an unknown join instant, and for an agent counted as its own source (local agents)", () => {
    expect(tooNewToCount(joined(1), "203.0.113.0/24", now, 0)).toBe(false);
    expect(tooNewToCount("", "203.0.113.0/24", now, HOUR)).toBe(false);
    expect(tooNewToCount(joined(1), "agent:ext_1", now, HOUR)).toBe(false);
    expect(tooNewToCount(joined(1), "", now, HOUR)).toBe(false);
  });
});

(pgUp ? describe : describe.skip)("new agents' votes and flags (real PostgreSQL)", () => {
  let tdb: TestDatabase;
  let db: Database;
  let handlers: forum.ForumServiceServer;
  const clock = new SetClock(new Date("2026-05-01T12:00:00Z"));
  const author = { agentId: "ext_author", name: "Author" };
  const SOURCES = ["203.0.113.0/24", "198.51.100.0/24", "192.0.2.0/24"];

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await openDatabase({ url: tdb.url, schema: "forum", log });
    await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log, { functionsDir: FUNCTIONS_DIR });
    const repo = new ForumRepository(db.pool, clock, {
      postsPerDay: 1e6,
      commentsPerDay: 1e6,
      agendaMinScore: 3,
      agendaSize: 10,
      minAgentAgeMs: HOUR,
    });
    handlers = forumHandlers(repo, log, new FlagStore(db.pool, clock, repo.outbox, 3, 100));
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  /** Calls a unary handler with the parts of a grpc-js call it reads, and resolves with its answer. */
  function call<Q, A>(method: keyof forum.ForumServiceServer, request: Q): Promise<A> {
    type Call = { request: Q; getPath(): string };
    const h = handlers[method] as unknown as (c: Call, cb: (e: unknown, a?: A) => void) => void;
    return new Promise((resolve, reject) => {
      h({ request, getPath: () => `/aps.forum.v1.ForumService/${method}` }, (e, a) =>
        e ? reject(e instanceof Error ? e : new Error(JSON.stringify(e))) : resolve(a!),
      );
    });
  }
  const createPost = () =>
    call<forum.CreatePostRequest, forum.Post>("createPost", {
      author,
      title: "New agents",
      body: "Body.",
      isArchDesign: true,
      idempotencyKey: "",
      tags: [],
    });
  const vote = (postId: string, voter: string, v: 1 | -1, source: string, joinedAt: string) =>
    call<forum.CastVoteRequest, forum.CastVoteResponse>("castVote", {
      postId,
      voterId: voter,
      vote: v,
      idempotencyKey: "",
      source,
      traceHeaders: {},
      voterJoinedAt: joinedAt,
      reason: "",
      voterName: "",
    });
  const status = async (id: string) =>
    (
      await db.pool.query<{ status: string; sources_for: number }>(
        "SELECT status, sources_for FROM posts WHERE id = $1",
        [id],
      )
    ).rows[0]!;
  const ago = (ms: number) => new Date(clock.now().getTime() - ms).toISOString();

  it("three new agents of three networks: +3 shown, nothing toward the agenda; the same votes do not start counting later, new ones do", async () => {
    const p = await createPost();
    const fresh = ago(60_000);
    for (const [i, src] of SOURCES.entries()) {
      const r = await vote(p.id, `ext_new${i}`, 1, src, fresh);
      expect(r.votes).toMatchObject({ for: i + 1, against: 0, score: i + 1 });
    }
    expect(await status(p.id)).toEqual({ status: "open", sources_for: 0 });
    const stored = await db.pool.query<{ source: string }>("SELECT DISTINCT source FROM votes WHERE post_id = $1", [
      p.id,
    ]);
    expect(stored.rows).toEqual([{ source: UNCOUNTED_SOURCE }]);

    // an hour later the same +1s still count for nothing (judged when cast) ...
    clock.at = new Date(clock.now().getTime() + HOUR);
    expect(await status(p.id)).toEqual({ status: "open", sources_for: 0 });
    // ... and a flip to −1 and back casts a new +1, now counted: three networks put it on the agenda
    for (const [i, src] of SOURCES.entries()) {
      await vote(p.id, `ext_new${i}`, -1, src, fresh);
      await vote(p.id, `ext_new${i}`, 1, src, fresh);
    }
    expect(await status(p.id)).toEqual({ status: "agenda", sources_for: 3 });
  });

  it("a new agent's own source (local agents of a loopback-only gateway) counts at once", async () => {
    const p = await createPost();
    for (let i = 0; i < 3; i++) await vote(p.id, `ext_local${i}`, 1, `agent:ext_local${i}`, ago(1_000));
    expect(await status(p.id)).toEqual({ status: "agenda", sources_for: 3 });
  });

  it("a new agent's flag carries no weight, even with Sagacity; an older one's does", async () => {
    const p = await call<forum.CreatePostRequest, forum.Post>("createPost", {
      author,
      title: "Flag me",
      body: "Body.",
      isArchDesign: false,
      idempotencyKey: "",
      tags: [],
    });
    const flag = (who: string, source: string, joinedAt: string) =>
      call<forum.FlagRequest, forum.FlagResult>("flag", {
        targetId: p.id,
        flaggerId: who,
        flaggerSagacity: 50,
        reason: "spam",
        text: "",
        source,
        flaggerJoinedAt: joinedAt,
      });
    for (const [i, src] of SOURCES.entries())
      expect(await flag(`ext_fresh${i}`, src, ago(60_000))).toMatchObject({ counted: false, hidden: false });
    expect(await flag("ext_old", SOURCES[0]!, ago(2 * HOUR))).toMatchObject({ counted: true, hidden: false });
  });
});
