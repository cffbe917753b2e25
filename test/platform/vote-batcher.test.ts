import {
  ApsError,
  createLogger,
  migrate,
  openDatabase,
  PLATFORM_MIGRATIONS_DIR,
  serviceClient,
  startGrpcServer,
  type Database,
  type ForumClient,
  type RunningGrpcServer,
} from "@aps/platform";
import { forum } from "@aps/proto";
import { VoteBatcher, type VoteRequest } from "@aps/api/posts/vote-batcher";
import { ForumRepository } from "@aps/forum/store/repository";
import { FUNCTIONS_DIR, MIGRATIONS_DIR } from "@aps/forum/store/paths";
import { forumHandlers } from "@aps/forum/grpc/handlers";
import { createTestDatabase, hasPostgres, SetClock, type TestDatabase } from "@aps/testkit";

/**
 * The gateway's vote batching (docs/design/votes-and-heat.md#gateway-batching), VoteBatcher over
 * the forum's typed client and the real forum handlers on the real PostgreSQL: the unkeyed votes
 * that arrive while its call is out go as one CastVotes call (counted at the handlers), each
 * failing alone; a keyed vote goes alone; a forum of the release before (no CastVotes) still gets
 * every vote; every vote of a call that failed as a whole fails with it.
 */
const log = createLogger("vote-batcher-test", "silent");
const pgUp = await hasPostgres();
const ABSENT_POST = "p_00000000000000000000000000";

(pgUp ? describe : describe.skip)("VoteBatcher (SKIPPED when no PostgreSQL is reachable)", () => {
  let tdb: TestDatabase;
  let db: Database;
  let server: RunningGrpcServer;
  let viaGrpc: ForumClient;
  let batcher: VoteBatcher;
  const calls = { castVote: 0, castVotes: 0, votesInBatches: 0 };
  const author = { agentId: "ag_author", name: "Author" };
  let repo: ForumRepository;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await openDatabase({ url: tdb.url, schema: "forum", poolSize: 10, log });
    await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log, { functionsDir: FUNCTIONS_DIR });
    repo = new ForumRepository(
      db.pool,
      new SetClock(new Date("2026-03-01T12:00:00Z")),
      { postsPerDay: 1e6, commentsPerDay: 1e6, agendaMinScore: 1_000, agendaSize: 10 },
      () => undefined,
    );
    const real = forumHandlers(repo, log);
    // the real handlers, counted
    const handlers: forum.ForumServiceServer = {
      ...real,
      castVote: (call, cb) => {
        calls.castVote++;
        real.castVote(call, cb);
      },
      castVotes: (call, cb) => {
        calls.castVotes++;
        calls.votesInBatches += call.request.votes.length;
        real.castVotes(call, cb);
      },
    };
    server = await startGrpcServer(
      "127.0.0.1:0",
      [
        {
          name: forum.ForumServiceDefinition.fullName,
          definition: forum.ForumServiceService,
          implementation: handlers,
        },
      ],
      log,
    );
    viaGrpc = serviceClient(forum.ForumServiceDefinition, `127.0.0.1:${server.port}`);
    batcher = new VoteBatcher(viaGrpc);
  });
  afterAll(async () => {
    viaGrpc?.close();
    await server?.shutdown(1_000);
    await db?.close();
    await tdb?.drop();
  });

  const votesOn = async (postId: string) =>
    Number(
      (await db.pool.query<{ n: string }>("SELECT count(*) AS n FROM votes WHERE post_id = $1", [postId])).rows[0]!.n,
    );
  const vote = (postId: string, voterId: string, v: number, idempotencyKey = ""): VoteRequest => ({
    postId,
    voterId,
    vote: v,
    idempotencyKey,
    source: "",
  });

  it("sends the votes that arrive while its call is out as one CastVotes call; each fails alone", async () => {
    const post = await repo.createPost(author, "Many at once", "body", false);
    const before = { ...calls };
    const n = 40;
    const settled = await Promise.allSettled(
      Array.from({ length: n }, (_, i) =>
        batcher.cast(vote(i === 7 ? ABSENT_POST : post.id, `ag_${i}`, i % 3 === 0 ? -1 : 1)),
      ),
    );
    const failed = settled.flatMap((s, i) => (s.status === "rejected" ? [[i, s.reason as unknown]] : []));
    expect(failed.map(([i]) => i)).toEqual([7]);
    expect(failed[0]![1]).toBeInstanceOf(ApsError);
    expect(failed[0]![1]).toMatchObject({ code: "not_found" });
    const sent = {
      castVote: calls.castVote - before.castVote,
      castVotes: calls.castVotes - before.castVotes,
      votesInBatches: calls.votesInBatches - before.votesInBatches,
    };
    expect(sent.castVotes).toBeGreaterThanOrEqual(1);
    expect(sent.castVote + sent.votesInBatches).toBe(n);
    expect(sent.castVote + sent.castVotes).toBeLessThan(n);
    expect(await votesOn(post.id)).toBe(n - 1);
    const against = Array.from({ length: n }, (_, i) => i).filter((i) => i !== 7 && i % 3 === 0).length;
    const last = await batcher.cast(vote(post.id, "ag_0", -1)); // a repeat: changes nothing, shows the tallies
    expect(last.votes).toEqual({ for: n - 1 - against, against, score: n - 1 - 2 * against });
  });

  it("a keyed vote goes alone as CastVote (its key binds one call's outcome, docs/design/edge.md#idempotency-key)", async () => {
    const post = await repo.createPost(author, "Keyed", "body", false);
    const before = { ...calls };
    await Promise.all(Array.from({ length: 5 }, (_, i) => batcher.cast(vote(post.id, `ag_k${i}`, 1, `key-${i}`))));
    expect(calls.castVote - before.castVote).toBe(5);
    expect(calls.castVotes - before.castVotes).toBe(0);
    expect(await votesOn(post.id)).toBe(5);
  });

  it("a forum of the release before (the real handlers without CastVotes standing in for it) still gets every vote, one CastVote each", async () => {
    const post = await repo.createPost(author, "Rolling update", "body", false);
    const { castVotes: _absent, ...previousRelease } = forumHandlers(repo, log);
    const counted = { castVote: 0 };
    const old = await startGrpcServer(
      "127.0.0.1:0",
      [
        {
          name: forum.ForumServiceDefinition.fullName,
          definition: forum.ForumServiceService,
          implementation: {
            ...previousRelease,
            castVote: (
              call: Parameters<typeof previousRelease.castVote>[0],
              cb: Parameters<typeof previousRelease.castVote>[1],
            ) => {
              counted.castVote++;
              previousRelease.castVote(call, cb);
            },
          },
        },
      ],
      log,
    );
    const client = serviceClient(forum.ForumServiceDefinition, `127.0.0.1:${old.port}`);
    const oldBatcher = new VoteBatcher(client);
    try {
      const n = 30;
      const answers = await Promise.all(
        Array.from({ length: n }, (_, i) => oldBatcher.cast(vote(post.id, `ag_r${i}`, 1))),
      );
      expect(answers.every((a) => a.postId === post.id && a.vote === 1)).toBe(true);
      expect(counted.castVote).toBe(n);
      expect(await votesOn(post.id)).toBe(n);
    } finally {
      client.close();
      await old.shutdown(1_000);
    }
  });

  it("every vote of a call that failed as a whole fails with it (the forum is gone: upstream_unavailable)", async () => {
    const post = await repo.createPost(author, "Gone", "body", false);
    const gone = await startGrpcServer(
      "127.0.0.1:0",
      [
        {
          name: forum.ForumServiceDefinition.fullName,
          definition: forum.ForumServiceService,
          implementation: forumHandlers(repo, log),
        },
      ],
      log,
    );
    const client = serviceClient(forum.ForumServiceDefinition, `127.0.0.1:${gone.port}`);
    const goneBatcher = new VoteBatcher(client);
    try {
      await gone.shutdown(0);
      const settled = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) => goneBatcher.cast(vote(post.id, `ag_g${i}`, 1))),
      );
      expect(settled.map((s) => s.status)).toEqual(Array(6).fill("rejected"));
      for (const s of settled)
        expect((s as PromiseRejectedResult).reason).toMatchObject({ code: "upstream_unavailable" });
      expect(await votesOn(post.id)).toBe(0);
    } finally {
      client.close();
    }
  });
});
