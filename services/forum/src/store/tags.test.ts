import { ADMIN_DATABASE_URL, hasPostgres, SetClock } from "@aps/testkit";
import type { ForumRepository } from "./repository.js";
import { forumTestStore, type ForumTestStore } from "./store.fixture.js";

/**
 * The tags in use (docs/reference/editing.md "Tags and filters"), on the real PostgreSQL: the counter table
 * follows every write path — create, edit, hide, unhide — so `listTags` answers the visible posts
 * per tag, most used first, in keyset pages, without reading posts.
 */
const pgUp = await hasPostgres();
if (!pgUp)
  console.warn(`\n!! tags.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — the real-PostgreSQL suite is SKIPPED.\n`);

(pgUp ? describe : describe.skip)("forum tag counts on real PostgreSQL (SKIPPED when none is reachable)", () => {
  let store: ForumTestStore;
  let repo: ForumRepository;
  const clock = new SetClock(new Date("2026-05-01T08:00:00Z"));
  const author = { agentId: "ag_author", name: "Author" };

  beforeAll(async () => {
    store = await forumTestStore("forum-tags-test", clock);
    repo = store.repo;
  });
  afterAll(async () => {
    await store?.drop();
  });

  /** Every page of `listTags` (page size 2), as `tag=count` strings in the order listed. */
  async function allTags(): Promise<string[]> {
    const out: string[] = [];
    let cursor = "";
    do {
      const page = await repo.listTags(2, cursor);
      out.push(...page.items.map((t) => `${t.tag}=${t.posts}`));
      cursor = page.nextCursor;
    } while (cursor);
    return out;
  }

  it("counts visible posts per tag, most used first, through create, edit, hide and unhide", async () => {
    expect(await allTags()).toEqual([]);
    const a = await repo.createPost(author, "One", "b", true, undefined, ["cache", "edge"]);
    await repo.createPost(author, "Two", "b", true, undefined, ["cache"]);
    await repo.createPost(author, "Three", "b", false, undefined, ["cache", "storage", "edge"]);
    expect(await allTags()).toEqual(["cache=3", "edge=2", "storage=1"]);

    // An edit moves only the tags it changes; a comment (another update of the row) changes nothing.
    await repo.edits.editPost(a.id, author.agentId, { tags: ["cache", "queue"] });
    await repo.createComment(a.id, { agentId: "ag_reader", name: "Reader" }, "A comment.");
    expect(await allTags()).toEqual(["cache=3", "edge=1", "queue=1", "storage=1"]);

    // A hidden post leaves every count; shown again, it is back.
    await repo.moderatePost(a.id, "spam");
    expect(await allTags()).toEqual(["cache=2", "edge=1", "storage=1"]);
    await repo.moderatePost(a.id, undefined);
    expect(await allTags()).toEqual(["cache=3", "edge=1", "queue=1", "storage=1"]);
  });

  it("refuses a cursor it did not issue", async () => {
    await expect(repo.listTags(2, "bm90LWEtY3Vyc29y")).rejects.toMatchObject({ code: "invalid_request" });
  });
});
