import { ApsError, type ForumClient } from "@aps/platform";
import { forum } from "@aps/proto";
import { hasPostgres, SetClock } from "@aps/testkit";
import { forumTestStore, type ForumTestStore } from "../store/store.fixture.js";
import { forumGrpcFixture, type ForumGrpcFixture } from "./server.fixture.js";

/**
 * ListComments of a page of posts (`post_ids`, docs/design/search-and-translation.md#resume-and-rebuild), over gRPC on the real
 * PostgreSQL: the comments of every post asked for and of no other, by comment id, paged by cursor
 * without loss or repeat; an absent post has none; `post_id` and `post_ids` together, neither, or
 * more than 100 ids are refused.
 */
const pgUp = await hasPostgres();
const ABSENT_POST = "p_00000000000000000000000000";

(pgUp ? describe : describe.skip)("ListComments of several posts (SKIPPED when no PostgreSQL is reachable)", () => {
  let store: ForumTestStore;
  let grpc: ForumGrpcFixture;
  let client: ForumClient;
  const author = { agentId: "ag_author", name: "Author" };

  beforeAll(async () => {
    store = await forumTestStore("forum-list-comments-test", new SetClock(new Date("2026-03-01T12:00:00Z")));
    grpc = await forumGrpcFixture("forum-list-comments-test", store.repo);
    client = grpc.viaGrpc;
  });
  afterAll(async () => {
    await grpc?.close();
    await store?.drop();
  });

  it("pages through the comments of the posts asked for, in id order, and of no other", async () => {
    const posts = [];
    for (let i = 0; i < 3; i++) posts.push(await store.repo.createPost(author, `Post ${i}`, "Body.", true));
    const written = new Map<string, string>(); // comment id → post id
    // interleaved, so that one post's comments are not one run of ids
    for (let round = 0; round < 4; round++)
      for (const p of posts) {
        const c = await store.repo.createComment(p.id, { agentId: `ag_r${round}`, name: "Reader" }, `Round ${round}.`);
        written.set(c.id, p.id);
      }
    const asked = [posts[0]!.id, posts[2]!.id, ABSENT_POST];
    const seen: forum.Comment[] = [];
    let cursor = "";
    let calls = 0;
    do {
      const page = await client.listComments({ postId: "", postIds: asked, limit: 3, cursor });
      seen.push(...page.items);
      cursor = page.nextCursor;
      calls++;
    } while (cursor && calls < 10);
    const expected = [...written].filter(([, postId]) => asked.includes(postId)).map(([id]) => id);
    expect(seen.map((c) => c.id)).toEqual([...expected].sort());
    expect(seen.every((c) => written.get(c.id) === c.postId)).toBe(true);
    expect(calls).toBe(Math.ceil(expected.length / 3));
  });

  it("answers an empty page for posts that have no comment or do not exist", async () => {
    const lone = await store.repo.createPost(author, "Lone", "Nobody answered.", false);
    const page = await client.listComments({ postId: "", postIds: [lone.id, ABSENT_POST], limit: 10, cursor: "" });
    expect([page.items, page.nextCursor]).toEqual([[], ""]);
  });

  it.each([
    ["both post_id and post_ids", { postId: ABSENT_POST, postIds: [ABSENT_POST] }],
    ["neither", { postId: "", postIds: [] }],
    ["101 ids", { postId: "", postIds: Array.from({ length: 101 }, () => ABSENT_POST) }],
  ])("refuses %s as invalid_request", async (_name, ids) => {
    const err = await client.listComments({ ...ids, limit: 10, cursor: "" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApsError);
    expect((err as ApsError).code).toBe("invalid_request");
  });
});
