import {
  CAST_VOTES_MAX,
  createLogger,
  migrate,
  serviceClient,
  type ForumClient,
  openDatabase,
  PLATFORM_MIGRATIONS_DIR,
  startGrpcServer,
  type Database,
  type RunningGrpcServer,
} from "@aps/platform";
import { forum } from "@aps/proto";
import { createTestDatabase, hasPostgres, SetClock, type TestDatabase } from "@aps/testkit";
import { ForumRepository } from "../store/repository.js";
import { FUNCTIONS_DIR, MIGRATIONS_DIR } from "../store/paths.js";
import { forumHandlers } from "./handlers.js";

/**
 * Votes sent together (docs/design/votes-and-heat.md#gateway-batching), on the real PostgreSQL, over gRPC and over the in-process
 * endpoint of the all-in-one: CastVotes casts each vote exactly as CastVote would and fails each
 * alone; a batch over CAST_VOTES_MAX is refused whole. The gateway's side, which sends the unkeyed
 * votes that arrive while its call is out as one CastVotes call, is tested with its VoteBatcher
 * (test/platform/vote-batcher.test.ts).
 */
const log = createLogger("forum-cast-votes-test", "silent");
const pgUp = await hasPostgres();
const ABSENT_POST = "p_00000000000000000000000000";

(pgUp ? describe : describe.skip)("CastVotes (SKIPPED when no PostgreSQL is reachable)", () => {
  let tdb: TestDatabase;
  let db: Database;
  let server: RunningGrpcServer;
  let viaGrpc: ForumClient;
  let viaLocal: ForumClient;
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
    const handlers = forumHandlers(repo, log);
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
    viaLocal = serviceClient(forum.ForumServiceDefinition, server.local(forum.ForumServiceDefinition, handlers));
  });
  afterAll(async () => {
    viaGrpc?.close();
    viaLocal?.close();
    await server?.shutdown(1_000);
    await db?.close();
    await tdb?.drop();
  });

  const votesOn = async (postId: string) =>
    Number(
      (await db.pool.query<{ n: string }>("SELECT count(*) AS n FROM votes WHERE post_id = $1", [postId])).rows[0]!.n,
    );
  const vote = (postId: string, voterId: string, v: number, idempotencyKey = ""): forum.CastVoteRequest => ({
    postId,
    voterId,
    vote: v,
    idempotencyKey,
    source: "",
    traceHeaders: {},
    voterJoinedAt: "",
    reason: "",
    voterName: "",
  });

  describe.each([
    ["gRPC", () => viaGrpc],
    ["in-process", () => viaLocal],
  ])("over %s", (_name, client) => {
    it("casts each vote as CastVote would and fails each alone, in the request's order", async () => {
      const post = await repo.createPost(author, "Batched", "body", false);
      const { outcomes } = await client().castVotes({
        votes: [
          vote(post.id, "ag_1", 1),
          vote(ABSENT_POST, "ag_2", 1),
          vote(post.id, "ag_3", 2),
          vote(post.id, "ag_4", -1),
          vote(post.id, "ag_1", 1),
        ],
      });
      expect(outcomes.map((o) => o.errorCode)).toEqual(["", "not_found", "invalid_request", "", ""]);
      expect(outcomes[1]!.vote).toBeUndefined();
      expect(outcomes[2]!.errorMessage).toMatch(/vote/);
      // the votes cast are in the table (the repeat changed nothing); a vote's answer carries its counts
      expect(await votesOn(post.id)).toBe(2);
      expect(outcomes[0]!.vote).toMatchObject({ postId: post.id, vote: 1 });
      expect(outcomes[3]!.vote).toMatchObject({ postId: post.id, vote: -1, votes: { against: 1 } });
      const again = await client().castVotes({ votes: [vote(post.id, "ag_1", 1)] });
      expect(again.outcomes[0]!.vote?.votes).toEqual({ for: 1, against: 1, score: 0 });
    });

    it(`refuses more than CAST_VOTES_MAX (${CAST_VOTES_MAX}) votes as a whole and casts none`, async () => {
      const post = await repo.createPost(author, "Too many", "body", false);
      const votes = Array.from({ length: CAST_VOTES_MAX + 1 }, (_, i) => vote(post.id, `ag_${i}`, 1));
      await expect(client().castVotes({ votes })).rejects.toMatchObject({ code: "invalid_request" });
      expect(await votesOn(post.id)).toBe(0);
    });
  });
});
