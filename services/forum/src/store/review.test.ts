import { ApsError, decodeTupleCursor, type Database } from "@aps/platform";
import { events } from "@aps/proto";
import { ADMIN_DATABASE_URL, hasPostgres, SetClock } from "@aps/testkit";
import { FlagStore } from "./flags.js";
import type { ForumRepository } from "./repository.js";
import { forumTestStore, type ForumTestStore } from "./store.fixture.js";

/**
 * The owner's review queue in the forum's store (docs/design/identity-and-abuse.md#review-queue), on
 * the real PostgreSQL: content the flags hid is listed oldest first with its flags and its
 * author's count, keyset page by page, and the owner's own hides are not; each decision takes it
 * out of the queue in one transaction with its events; a restore's flags never count again; the
 * same decision again changes nothing, another is `invalid_state`; the queue reads its partial
 * indexes.
 */
const pgUp = await hasPostgres();
if (!pgUp)
  console.warn(`\n!! review.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — the real-PostgreSQL suite is SKIPPED.\n`);

(pgUp ? describe : describe.skip)(
  "the owner's review queue on real PostgreSQL (SKIPPED when none is reachable)",
  () => {
    let store: ForumTestStore;
    let db: Database;
    let repo: ForumRepository;
    let flags: FlagStore;
    const clock = new SetClock(new Date("2026-05-01T08:00:00Z"));
    const author = { agentId: "ag_author", name: "Author" };
    const other = { agentId: "ag_other", name: "Other" };

    beforeAll(async () => {
      store = await forumTestStore("forum-review-test", clock);
      ({ db, repo } = store);
      flags = new FlagStore(db.pool, clock, repo.outbox, 2); // FLAG_HIDE_THRESHOLD 2
    });
    afterAll(async () => {
      await store?.drop();
    });

    const code = (p: Promise<unknown>) =>
      p.then(
        () => "ok",
        (e: unknown) => (e instanceof ApsError ? e.code : String(e)),
      );
    const tick = () => (clock.at = new Date(clock.at.getTime() + 60_000));
    /** Two weighted flags of distinct sources hide `id`. */
    const hideByFlags = async (id: string, by: [string, string]) => {
      expect(await flags.flag(id, by[0], 1, "spam", "", `src:${by[0]}`)).toMatchObject({ hidden: false });
      expect(await flags.flag(id, by[1], 1, "other", "Copied", `src:${by[1]}`)).toMatchObject({ hidden: true });
      tick();
    };
    const queued = async () => (await repo.review.list(100, "")).items.map((i) => i.targetId);
    const outbox = async <T>(subject: string, decode: (b: Buffer) => T) =>
      (
        await db.pool.query<{ payload: Buffer }>("SELECT payload FROM outbox WHERE subject = $1 ORDER BY seq", [
          subject,
        ])
      ).rows.map((r) => decode(r.payload));

    it("lists content hidden by flags oldest first, with its flags and author's count, page by page; not the owner's hides", async () => {
      const a = await repo.createPost(author, "Cheap watches", "Buy now.", false);
      const b = await repo.createPost(other, "Also spam", "Spam body.", false);
      const c = await repo.createComment(a.id, author, "Spam comment.");
      const own = await repo.createPost(author, "Owner hides it", "Body.", false);
      await hideByFlags(b.id, ["ag_f1", "ag_f2"]);
      await hideByFlags(c.id, ["ag_f1", "ag_f2"]);
      await hideByFlags(a.id, ["ag_f3", "ag_f4"]);
      await repo.moderatePost(own.id, "owner's own reason");
      expect(await code(flags.flag(own.id, "ag_f5", 1, "spam", ""))).toBe("invalid_state");

      const page = await repo.review.list(100, "");
      expect(page.items.map((i) => i.targetId)).toEqual([b.id, c.id, a.id]);
      expect(page.nextCursor).toBe("");
      const ic = page.items[1]!;
      expect(ic).toMatchObject({
        postId: a.id,
        title: "Cheap watches",
        excerpt: "Spam comment.",
        authorId: author.agentId,
        authorName: "Author",
        authorFlagHidden: 2, // the comment and post a
        hiddenReason: expect.stringMatching(/2 flags/),
      });
      expect(ic.ageSeconds).toBe(120);
      expect(ic.flags).toEqual([
        {
          flaggerId: "ag_f1",
          reason: "spam",
          text: "",
          source: "src:ag_f1",
          counted: true,
          flaggedAt: expect.any(String),
          decidedAt: "",
        },
        expect.objectContaining({ flaggerId: "ag_f2", reason: "other", text: "Copied", counted: true, decidedAt: "" }),
      ]);
      expect(page.items[0]).toMatchObject({ authorId: other.agentId, authorFlagHidden: 1, excerpt: "Spam body." });

      // keyset pages of one
      const seen: string[] = [];
      let cursor = "";
      do {
        const p = await repo.review.list(1, cursor);
        seen.push(...p.items.map((i) => i.targetId));
        cursor = p.nextCursor;
        if (cursor) expect(decodeTupleCursor(cursor, 2)[1]).toBe(seen[seen.length - 1]);
      } while (cursor);
      expect(seen).toEqual([b.id, c.id, a.id]);
      for (const bad of ["nope", Buffer.from('["x","p_1"]').toString("base64url")])
        expect(await code(repo.review.list(10, bad))).toBe("invalid_request");
    });

    it("restore shows it again, leaves the queue, and its flags never count again; the same decision again changes nothing", async () => {
      const p = await repo.createPost(author, "Wrongly flagged", "Fine body.", false);
      await hideByFlags(p.id, ["ag_r1", "ag_r2"]);
      expect(await queued()).toContain(p.id);
      const d = await repo.review.decide(p.id, "restore", "");
      expect(d).toMatchObject({ targetId: p.id, postId: p.id, authorId: author.agentId, decision: "restore" });
      expect(d).toMatchObject({ hidden: false, changed: true, decidedAt: clock.at.toISOString() });
      expect((await repo.getPost(p.id, "")).post).toMatchObject({ title: "Wrongly flagged", hiddenAt: "" });
      expect(await queued()).not.toContain(p.id);
      const f = await db.pool.query("SELECT counted, decided_at FROM flags WHERE target_id = $1", [p.id]);
      expect(f.rows).toEqual([
        { counted: false, decided_at: clock.at },
        { counted: false, decided_at: clock.at },
      ]);
      // its flaggers cannot flag it again, and their later flags carry no weight for 7 days
      expect(await code(flags.flag(p.id, "ag_r1", 1, "spam", ""))).toBe("invalid_state");
      expect(await flags.flag(p.id, "ag_r3", 1, "spam", "")).toMatchObject({ counted: true, hidden: false });

      tick();
      const again = await repo.review.decide(p.id, "restore", "retry");
      expect(again).toMatchObject({ changed: false, decidedAt: d.decidedAt, reason: "" });
      expect(await code(repo.review.decide(p.id, "keep_hidden", "late"))).toBe("invalid_state");

      const reviewed = await outbox("forum.content_reviewed", (b) => events.ContentReviewed.decode(b));
      expect(reviewed.filter((e) => e.postId === p.id).map((e) => [e.commentId, e.authorId, e.decision])).toEqual([
        ["", author.agentId, "restore"],
      ]);
      const moderated = await outbox("forum.post_moderated", (b) => events.PostModerated.decode(b));
      expect(moderated.filter((e) => e.postId === p.id).map((e) => e.hidden)).toEqual([true, false]);
    });

    it("keep_hidden and suspend_author keep it hidden with the owner's reason and take it out of the queue", async () => {
      const p = await repo.createPost(other, "Kept hidden", "Spam.", false);
      const c = await repo.createComment(p.id, other, "More spam.");
      await hideByFlags(p.id, ["ag_k1", "ag_k2"]);
      await hideByFlags(c.id, ["ag_k1", "ag_k2"]);
      expect(await repo.review.decide(p.id, "keep_hidden", "spam, confirmed")).toMatchObject({
        hidden: true,
        changed: true,
      });
      expect(await repo.review.decide(c.id, "suspend_author", "spammer")).toMatchObject({
        postId: p.id,
        authorId: other.agentId,
        hidden: true,
      });
      expect((await repo.getPosts([p.id]))[0]).toMatchObject({ title: "[hidden]", hiddenReason: "spam, confirmed" });
      const queue = await queued();
      expect(queue).not.toContain(p.id);
      expect(queue).not.toContain(c.id);
      expect(await code(repo.review.decide(p.id, "restore", ""))).toBe("invalid_state");
      expect((await repo.review.decide(c.id, "suspend_author", "again")).changed).toBe(false);
      const flagged = await db.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM flags WHERE target_id = ANY($1) AND counted AND decided_at IS NOT NULL",
        [[p.id, c.id]],
      );
      expect(flagged.rows[0]!.n).toBe(4); // decided, weight kept: no penalty for upheld flags

      // the author's count keeps what was kept hidden; an unhide by the owner later takes it back
      const b = await repo.createPost(other, "Third", "Spam.", false);
      await hideByFlags(b.id, ["ag_k3", "ag_k4"]);
      expect((await repo.review.list(100, "")).items.find((i) => i.targetId === b.id)?.authorFlagHidden).toBe(4);
      await repo.moderatePost(p.id, undefined);
      expect((await repo.review.list(100, "")).items.find((i) => i.targetId === b.id)?.authorFlagHidden).toBe(3);
      // the owner's hide route decides too: keep_hidden with its reason
      await repo.moderatePost(b.id, "hidden by route");
      expect(await queued()).not.toContain(b.id);
      expect((await repo.review.decide(b.id, "keep_hidden", "x")).reason).toBe("hidden by route");
    });

    it("refuses what awaits no review and unknown targets, changing nothing", async () => {
      const p = await repo.createPost(author, "Never flagged", "Body.", false);
      expect(await code(repo.review.decide(p.id, "restore", ""))).toBe("invalid_state");
      expect(await code(repo.review.decide("p_01ARZ3NDEKTSV4RRFFQ69G5FAV", "restore", ""))).toBe("not_found");
      expect(await code(repo.review.decide("c_01ARZ3NDEKTSV4RRFFQ69G5FAV", "keep_hidden", "x"))).toBe("not_found");
      const r = await db.pool.query("SELECT flags_decision FROM posts WHERE id = $1", [p.id]);
      expect(r.rows[0]).toEqual({ flags_decision: null });
    });

    it("reads the queue on its partial indexes", async () => {
      const plan = async (sql: string) => {
        const c = await db.pool.connect();
        try {
          await c.query("SET enable_seqscan = off"); // a test table is tiny: ask which index serves
          return (await c.query<{ "QUERY PLAN": string }>(`EXPLAIN ${sql}`)).rows
            .map((r) => r["QUERY PLAN"])
            .join("\n");
        } finally {
          await c.query("RESET enable_seqscan");
          c.release();
        }
      };
      expect(
        await plan(
          "SELECT id FROM posts WHERE hidden_by_flags AND (hidden_at, id) > ('-infinity'::timestamptz, '') ORDER BY hidden_at, id LIMIT 51",
        ),
      ).toMatch(/posts_review_queue/);
      expect(
        await plan(
          "SELECT id FROM comments WHERE hidden_by_flags AND (hidden_at, id) > ('-infinity'::timestamptz, '') ORDER BY hidden_at, id LIMIT 51",
        ),
      ).toMatch(/comments_review_queue/);
      expect(
        await plan(
          "SELECT author_id FROM posts WHERE author_id = ANY('{a}'::text[]) AND (hidden_by_flags OR flags_decision IN ('keep_hidden', 'suspend_author'))",
        ),
      ).toMatch(/posts_flag_hidden_author/);
    });
  },
);
