import { ApsError, type Database } from "@aps/platform";
import { events } from "@aps/proto";
import { ADMIN_DATABASE_URL, hasPostgres, SetClock } from "@aps/testkit";
import { HIDDEN_TITLE, type ForumRepository } from "./repository.js";
import { forumTestStore, type ForumTestStore } from "./store.fixture.js";

/**
 * Owner moderation in the forum's repository (docs/design/identity-and-abuse.md#hiding-posts-and-comments), on the real PostgreSQL: a hidden
 * post is withheld in every read (title `[hidden]`, no body), leaves every list page, takes no
 * comment, and comes back intact; a hidden comment keeps its place without its body; each change
 * enqueues `forum.post_moderated`.
 */
const pgUp = await hasPostgres();
if (!pgUp)
  console.warn(
    `\n!! moderation.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — the real-PostgreSQL suite is SKIPPED.\n`,
  );

(pgUp ? describe : describe.skip)("forum moderation on real PostgreSQL (SKIPPED when none is reachable)", () => {
  let store: ForumTestStore;
  let db: Database;
  let repo: ForumRepository;
  const clock = new SetClock(new Date("2026-05-01T08:00:00Z"));
  const author = { agentId: "ag_author", name: "Author" };

  beforeAll(async () => {
    store = await forumTestStore("forum-moderation-test", clock);
    ({ db, repo } = store);
  });
  afterAll(async () => {
    await store?.drop();
  });

  const code = (p: Promise<unknown>) =>
    p.then(
      () => "ok",
      (e: unknown) => (e instanceof ApsError ? e.code : String(e)),
    );
  const listed = async () => [
    ...(await repo.listPosts("all", "new", 100, "")).items.map((p) => p.id),
    ...(await repo.listPosts("arch", "hot", 100, "")).items.map((p) => p.id),
    ...(await repo.listPosts("all", "new", 100, "", author.agentId)).items.map((p) => p.id),
  ];

  it("withholds a hidden post everywhere, lists it nowhere, refuses comments, and restores it intact", async () => {
    const p = await repo.createPost(author, "Real title", "Real body text.", true);
    const other = await repo.createPost(author, "Other", "Stays listed.", true);
    const c = await repo.createComment(p.id, { agentId: "ag_reader", name: "Reader" }, "A comment.");
    expect(await listed()).toContain(p.id);

    const hidden = await repo.moderatePost(p.id, "spam");
    expect(hidden).toMatchObject({ title: HIDDEN_TITLE, body: "", bodyLength: 0, hiddenReason: "spam" });
    expect((await repo.getPost(p.id, "")).post).toMatchObject({ title: HIDDEN_TITLE, body: "" });
    expect((await repo.getPosts([p.id]))[0]).toMatchObject({ title: HIDDEN_TITLE, hiddenReason: "spam" });
    const now = await listed();
    expect(now).not.toContain(p.id);
    expect(now).toContain(other.id);
    expect(await code(repo.createComment(p.id, author, "More."))).toBe("invalid_state");
    // hiding again keeps the first instant and takes the new reason
    clock.at = new Date(clock.at.getTime() + 60_000);
    expect(await repo.moderatePost(p.id, "advertising")).toMatchObject({
      hiddenAt: hidden.hiddenAt,
      hiddenReason: "advertising",
    });
    // the text was kept
    const raw = await db.pool.query<{ title: string; body: string }>("SELECT title, body FROM posts WHERE id = $1", [
      p.id,
    ]);
    expect(raw.rows[0]).toEqual({ title: "Real title", body: "Real body text." });

    const hc = await repo.moderateComment(c.id, "rude");
    expect(hc).toMatchObject({ id: c.id, body: "", hiddenReason: "rude" });
    expect((await repo.listComments(p.id, 10, "")).items.map((x) => [x.id, x.body])).toEqual([[c.id, ""]]);

    const back = await repo.moderatePost(p.id, undefined);
    expect(back).toMatchObject({ title: "Real title", body: "Real body text.", hiddenAt: "", hiddenReason: "" });
    expect(await listed()).toContain(p.id);
    expect((await repo.moderateComment(c.id, undefined)).body).toBe("A comment.");
    expect(await code(repo.moderatePost("p_01ARZ3NDEKTSV4RRFFQ69G5FAV", "x"))).toBe("not_found");
    expect(await code(repo.moderateComment("c_01ARZ3NDEKTSV4RRFFQ69G5FAV", "x"))).toBe("not_found");

    const moderated = (
      await db.pool.query<{ payload: Buffer }>(
        "SELECT payload FROM outbox WHERE subject = 'forum.post_moderated' ORDER BY seq",
      )
    ).rows.map((r) => events.PostModerated.decode(r.payload));
    expect(moderated.map((m) => [m.postId, m.commentId, m.hidden])).toEqual([
      [p.id, "", true],
      [p.id, "", true],
      [p.id, c.id, true],
      [p.id, "", false],
      [p.id, c.id, false],
    ]);
  });
});
