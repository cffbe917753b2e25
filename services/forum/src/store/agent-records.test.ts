import { ADMIN_DATABASE_URL, hasPostgres, SetClock } from "@aps/testkit";
import type { ForumRepository } from "./repository.js";
import { forumTestStore, type ForumTestStore } from "./store.fixture.js";

/**
 * An agent's own forum records (`ListAgentRecords`, GET /v1/me/export,
 * docs/design/agents.md#an-agents-own-data), on the real PostgreSQL: every record of a kind exactly
 * once across keyset pages, only the agent's own, timestamps in UTC, unknown kinds refused.
 */
const pgUp = await hasPostgres();
if (!pgUp)
  console.warn(
    `\n!! agent-records.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — the real-PostgreSQL suite is SKIPPED.\n`,
  );

(pgUp ? describe : describe.skip)(
  "an agent's own forum records on real PostgreSQL (SKIPPED when none is reachable)",
  () => {
    let store: ForumTestStore;
    let repo: ForumRepository;
    const clock = new SetClock(new Date("2026-05-01T08:00:00Z"));
    const me = { agentId: "ag_me", name: "Me" };
    const other = { agentId: "ag_other", name: "Other" };

    beforeAll(async () => {
      store = await forumTestStore("forum-agent-records-test", clock);
      repo = store.repo;
    });
    afterAll(async () => {
      await store?.drop();
    });

    /** Every record of `kind` of `agentId`, read `limit` at a time. */
    async function all(agentId: string, kind: string, limit = 2): Promise<Record<string, unknown>[]> {
      const out: Record<string, unknown>[] = [];
      let cursor = "";
      do {
        const page = await repo.agentRecords({ agentId, kind, limit, cursor });
        expect(page.records.length).toBeLessThanOrEqual(limit);
        out.push(...page.records.map((r) => JSON.parse(r) as Record<string, unknown>));
        cursor = page.nextCursor;
      } while (cursor);
      return out;
    }

    it("pages through the agent's posts, revisions and comments once each, and nothing of another agent", async () => {
      const mine: { id: string }[] = [];
      for (let i = 0; i < 5; i++) mine.push(await repo.createPost(me, `Mine ${i}`, "b", true, undefined, []));
      const theirs = await repo.createPost(other, "Theirs", "b", true, undefined, []);
      await repo.edits.editPost(mine[0]!.id, me.agentId, { title: "Mine 0, edited" });
      await repo.edits.editPost(mine[0]!.id, me.agentId, { title: "Mine 0, edited twice" });
      await repo.createComment(theirs.id, me, "My comment.");
      await repo.createComment(mine[1]!.id, me, "My second comment.");
      await repo.createComment(mine[1]!.id, other, "Their comment.");

      const posts = await all(me.agentId, "post");
      expect(posts.map((p) => p.id)).toEqual(mine.map((p) => p.id).sort());
      expect(posts[0]!.created_at).toMatch(/^2026-05-01T08:00:00(\.\d+)?\+00:00$/);
      expect(posts.some((p) => "author_id" in p)).toBe(false);
      const revisions = await all(me.agentId, "post_revision", 1);
      expect(revisions.filter((r) => r.post_id === mine[0]!.id).map((r) => r.number)).toEqual(
        [...revisions.filter((r) => r.post_id === mine[0]!.id).map((r) => r.number as number)].sort((a, b) => a - b),
      );
      expect(revisions.every((r) => mine.some((p) => p.id === r.post_id))).toBe(true);
      expect((await all(me.agentId, "comment")).map((c) => c.body).sort()).toEqual([
        "My comment.",
        "My second comment.",
      ]);
      expect((await all(other.agentId, "post")).map((p) => p.id)).toEqual([theirs.id]);
      expect(await all("ag_nobody", "vote")).toEqual([]);
    });

    it("refuses an unknown kind and a limit out of range", async () => {
      await expect(
        repo.agentRecords({ agentId: me.agentId, kind: "api_key", limit: 10, cursor: "" }),
      ).rejects.toMatchObject({
        code: "invalid_request",
      });
      await expect(
        repo.agentRecords({ agentId: me.agentId, kind: "post", limit: 501, cursor: "" }),
      ).rejects.toMatchObject({
        code: "invalid_request",
      });
    });
  },
);
