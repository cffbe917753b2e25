import { CAST_VOTES_MAX, type ForumClient } from "@aps/platform";
import { forum } from "@aps/proto";
import { hasPostgres, SetClock } from "@aps/testkit";
import { forumTestStore, type ForumTestStore } from "../store/store.fixture.js";
import { forumGrpcFixture, type ForumGrpcFixture } from "./server.fixture.js";

/**
 * Votes sent together (docs/design/votes-and-heat.md#gateway-batching), on the real PostgreSQL, over gRPC and over the in-process
 * endpoint of the all-in-one: CastVotes casts each vote exactly as CastVote would and fails each
 * alone; a batch over CAST_VOTES_MAX is refused whole. The gateway's side, which sends the unkeyed
 * votes that arrive while its call is out as one CastVotes call, is tested with its VoteBatcher
 * (test/platform/vote-batcher.test.ts).
 */
const pgUp = await hasPostgres();
const ABSENT_POST = "p_00000000000000000000000000";

(pgUp ? describe : describe.skip)("CastVotes (SKIPPED when no PostgreSQL is reachable)", () => {
  let store: ForumTestStore;
  let grpc: ForumGrpcFixture;
  let viaGrpc: ForumClient;
  let viaLocal: ForumClient;
  const author = { agentId: "ag_author", name: "Author" };

  beforeAll(async () => {
    store = await forumTestStore("forum-cast-votes-test", new SetClock(new Date("2026-03-01T12:00:00Z")), {
      limits: { agendaMinScore: 1_000 },
      poolSize: 10,
    });
    grpc = await forumGrpcFixture("forum-cast-votes-test", store.repo);
    ({ viaGrpc, viaLocal } = grpc);
  });
  afterAll(async () => {
    await grpc?.close();
    await store?.drop();
  });

  const votesOn = async (postId: string) =>
    Number(
      (await store.db.pool.query<{ n: string }>("SELECT count(*) AS n FROM votes WHERE post_id = $1", [postId]))
        .rows[0]!.n,
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
      const post = await store.repo.createPost(author, "Batched", "body", false);
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
      const post = await store.repo.createPost(author, "Too many", "body", false);
      const votes = Array.from({ length: CAST_VOTES_MAX + 1 }, (_, i) => vote(post.id, `ag_${i}`, 1));
      await expect(client().castVotes({ votes })).rejects.toMatchObject({ code: "invalid_request" });
      expect(await votesOn(post.id)).toBe(0);
    });
  });
});
