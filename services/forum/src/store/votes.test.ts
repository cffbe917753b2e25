import {
  createLogger,
  encodeEventFields,
  migrate,
  openDatabase,
  PLATFORM_MIGRATIONS_DIR,
  TYPED_ROW_GUARD,
  type Database,
} from "@aps/platform";
import { events } from "@aps/proto";
import { createTestDatabase, hasPostgres, seededRandom, SetClock } from "@aps/testkit";
import { ForumRepository, type ForumLimits } from "./repository.js";
import { FUNCTIONS_DIR, MIGRATIONS_DIR } from "./paths.js";

/**
 * The vote as one statement (`cast_vote`, docs/design/votes-and-heat.md#the-vote-statement), on the real PostgreSQL (the embedded
 * server of the all-in-one is the same engine, docs/design/services.md#embedded-postgresql): first votes, repeats (no change, no event) and flips; the events
 * as typed outbox rows completed in SQL (docs/design/events.md#outbox); the append-only history; the heat rule
 * (docs/design/votes-and-heat.md#the-agenda-rule); one +1 per source toward the agenda (docs/design/votes-and-heat.md#agenda-score-per-source); and exact
 * tallies and per-source counts after many concurrent mixed votes on one post, checked against an
 * independent count of the votes table and against the chain of vote_cast events.
 */
const log = createLogger("forum-votes-test", "silent");
const pgUp = await hasPostgres();

interface Backend {
  name: string;
  open(): Promise<{ db: Database; cleanup(): Promise<void> }>;
}

const postgres: Backend = {
  name: "real PostgreSQL",
  open: async () => {
    const tdb = await createTestDatabase();
    const db = await openDatabase({ url: tdb.url, schema: "forum", poolSize: 20, log });
    return {
      db,
      cleanup: async () => {
        await db.close();
        await tdb.drop();
      },
    };
  },
};

const DAY_MS = 86_400_000;

(pgUp ? describe.each([postgres]) : describe.skip.each([postgres]))(
  "votes on $name (SKIPPED when no PostgreSQL is reachable)",
  (backend) => {
    let db: Database;
    let cleanup: () => Promise<void>;
    const clock = new SetClock(new Date("2026-01-10T12:00:00Z"));
    let commits = 0;
    const repo = (limits: Partial<ForumLimits> = {}) =>
      new ForumRepository(
        db.pool,
        clock,
        { postsPerDay: 1e6, commentsPerDay: 1e6, agendaMinScore: 3, agendaSize: 10, ...limits },
        () => commits++,
      );

    beforeAll(async () => {
      ({ db, cleanup } = await backend.open());
      await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log, { functionsDir: FUNCTIONS_DIR });
    });
    afterAll(async () => {
      await cleanup?.();
    });

    const author = { agentId: "ag_author", name: "Author" };
    const count = async (sql: string, params: unknown[] = []) =>
      Number((await db.pool.query<{ n: string }>(sql, params)).rows[0]!.n);
    /**
     * The outbox rows of `subject`, in seq order, with the payload the relay publishes: a typed
     * row's fields encoded with the catalogue (docs/design/events.md#outbox).
     */
    const outbox = async (subject: string) =>
      (
        await db.pool.query<{
          event_id: string;
          payload: Buffer | null;
          fields: Record<string, unknown> | null;
          headers: Record<string, string>;
        }>("SELECT event_id, payload, fields, headers FROM outbox WHERE subject = $1 ORDER BY seq", [subject])
      ).rows.map((r) => ({ ...r, payload: r.payload ?? Buffer.from(encodeEventFields(subject, r.fields ?? {})) }));
    const voteEventsOf = async (postId: string) =>
      (await outbox("forum.vote_cast"))
        .map((r) => ({ raw: r.payload, headers: r.headers, e: events.VoteCast.decode(r.payload) }))
        .filter((x) => x.e.postId === postId);
    /** Tallies counted from the votes table, independently of posts.votes_for/against. */
    const counted = async (postId: string) => {
      const r = await db.pool.query<{ f: string; a: string }>(
        "SELECT count(*) FILTER (WHERE vote = 1) AS f, count(*) FILTER (WHERE vote = -1) AS a FROM votes WHERE post_id = $1",
        [postId],
      );
      return { for: Number(r.rows[0]!.f), against: Number(r.rows[0]!.a) };
    };
    const postRow = async (postId: string) =>
      (
        await db.pool.query<{
          votes_for: number;
          votes_against: number;
          sources_for: number;
          status: string;
          heat: number;
          expected_heat: number;
        }>(
          // heat follows the agenda score: distinct sources of +1 votes − votes against (docs/design/votes-and-heat.md#agenda-score-per-source)
          "SELECT votes_for, votes_against, sources_for, status, heat, heat(sources_for - votes_against, created_at) AS expected_heat FROM posts WHERE id = $1",
          [postId],
        )
      ).rows[0]!;
    /**
     * The per-source counters of `postId` (vote_sources, posts.sources_for) next to what an
     * independent count of the votes table gives: the +1 votes per source (NULL = `agent:<id>`).
     */
    const sourcesOf = async (postId: string) => {
      const kept = await db.pool.query<{ source: string; plus: number }>(
        "SELECT source, plus FROM vote_sources WHERE post_id = $1 ORDER BY source",
        [postId],
      );
      const truth = await db.pool.query<{ source: string; plus: number }>(
        `SELECT coalesce(source, 'agent:' || agent_id) AS source, count(*)::int AS plus FROM votes
          WHERE post_id = $1 AND vote = 1 GROUP BY 1 ORDER BY 1`,
        [postId],
      );
      return { kept: kept.rows, truth: truth.rows, sourcesFor: (await postRow(postId)).sources_for };
    };

    it("writes typed outbox rows: the event's fields under its catalogue type, no payload encoded in SQL (docs/design/events.md#outbox)", async () => {
      const r = repo();
      const post = await r.createPost(author, "Typed rows", "body", false);
      await r.castVote(post.id, "ag_typed", -1);
      const rows = await db.pool.query<{ payload: Buffer | null; fields: Record<string, unknown>; headers: object }>(
        "SELECT payload, fields, headers FROM outbox WHERE subject = 'forum.vote_cast' AND fields ->> 'postId' = $1",
        [post.id],
      );
      expect(rows.rows).toHaveLength(1);
      expect(rows.rows[0]!.payload).toBeNull();
      // every name is a field of the catalogue's message, so the relay's encoding loses nothing
      expect(Object.keys(rows.rows[0]!.fields).sort()).toEqual(Object.keys(events.VoteCast.fromPartial({})).sort());
      expect(rows.rows[0]!.headers).toMatchObject({ [TYPED_ROW_GUARD.name]: TYPED_ROW_GUARD.value });
      // nothing in the schema encodes protobuf any more
      expect(
        await count(
          "SELECT count(*) AS n FROM pg_proc WHERE proname LIKE 'pb\\_%' AND pronamespace = current_schema()::regnamespace",
        ),
      ).toBe(0);
    });

    it("a replica of the release before still votes through the previous signatures: typed rows built from its arguments (docs/design/events.md#outbox)", async () => {
      const r = repo({ agendaMinScore: 1, agendaSize: 1_000 });
      clock.at = new Date("2032-03-04T05:06:07.089Z");
      const post = await r.createPost(author, "Rolling update", "body", true);
      const headers = (type: string) => JSON.stringify({ "aps-event-type": type, traceparent: "00-ab-cd-01" });
      const one = await db.pool.query(
        "SELECT * FROM cast_vote($1, $2, 1::smallint, $3, 1, 1000, 'e_vote_1', '\\x0a01'::bytea, $4, 'e_agenda_1', '\\x'::bytea, $5)",
        [post.id, "ag_old1", clock.at, headers("forum.vote_cast"), headers("forum.post_on_agenda")],
      );
      expect(one.rows[0]).toMatchObject({ post_found: true, changed: true, tally_for: 1, moved_to_agenda: true });
      const batch = await db.pool.query(
        `SELECT * FROM cast_votes(ARRAY[$1, $1], ARRAY['ag_old2', 'ag_old3'], ARRAY[-1, 1]::smallint[], ARRAY[$2, $2]::timestamptz[], 1, 1000,
           ARRAY['e_vote_2', 'e_vote_3'], ARRAY['\\x', '\\x']::bytea[], ARRAY[$3, $3]::jsonb[],
           ARRAY['e_agenda_2', 'e_agenda_3'], ARRAY['\\x', '\\x']::bytea[], ARRAY[$4, $4]::jsonb[], ARRAY['198.51.100.0/24', NULL])`,
        [post.id, clock.at, headers("forum.vote_cast"), headers("forum.post_on_agenda")],
      );
      expect(batch.rows.map((x) => [x.idx, x.changed])).toEqual([
        [1, true],
        [2, true],
      ]);
      const votes = (await voteEventsOf(post.id)).map((x) => x.e);
      expect(votes).toEqual([
        {
          eventId: "e_vote_1",
          occurredAt: clock.at.toISOString(),
          postId: post.id,
          voterId: "ag_old1",
          vote: 1,
          previousVote: 0,
          votesFor: 1,
          votesAgainst: 0,
          postAuthorId: author.agentId,
        },
        {
          eventId: "e_vote_2",
          occurredAt: clock.at.toISOString(),
          postId: post.id,
          voterId: "ag_old2",
          vote: -1,
          previousVote: 0,
          votesFor: 1,
          votesAgainst: 1,
          postAuthorId: author.agentId,
        },
        {
          eventId: "e_vote_3",
          occurredAt: clock.at.toISOString(),
          postId: post.id,
          voterId: "ag_old3",
          vote: 1,
          previousVote: 0,
          votesFor: 2,
          votesAgainst: 1,
          postAuthorId: author.agentId,
        },
      ]);
      const agenda = (await outbox("forum.post_on_agenda")).filter((o) => o.event_id === "e_agenda_1");
      expect(events.PostOnAgenda.decode(agenda[0]!.payload)).toEqual({
        eventId: "e_agenda_1",
        occurredAt: clock.at.toISOString(),
        postId: post.id,
        authorId: author.agentId,
      });
      expect(agenda[0]!.headers).toMatchObject({
        traceparent: "00-ab-cd-01",
        [TYPED_ROW_GUARD.name]: TYPED_ROW_GUARD.value,
      });
    });

    it("a keyed vote (Idempotency-Key, docs/design/edge.md#idempotency-key) is cast once: its retry after a later flip answers the first result and changes nothing", async () => {
      const r = repo();
      const post = await r.createPost(author, "Keyed votes", "body", false);
      const scope = {
        agentId: "ag_k",
        key: "vote-up",
        operation: "forum.CastVote",
        request: { postId: post.id, vote: 1 },
      };
      const up = await r.castVote(post.id, "ag_k", 1, scope);
      expect(up.votes).toEqual({ for: 1, against: 0, score: 1 });
      clock.at = new Date(clock.at.getTime() + 1_000);
      await r.castVote(post.id, "ag_k", -1);
      const retry = await r.castVote(post.id, "ag_k", 1, scope);
      expect(retry).toEqual(up);
      expect(await counted(post.id)).toEqual({ for: 0, against: 1 });
      expect(await voteEventsOf(post.id)).toHaveLength(2);
      // a keyed post, retried: one post
      const pScope = { agentId: author.agentId, key: "post-1", operation: "forum.CreatePost", request: { t: "K" } };
      const p1 = await r.createPost(author, "K", "body", false, pScope);
      const p2 = await r.createPost(author, "K", "body", false, pScope);
      expect(p2).toEqual(p1);
      expect(await count("SELECT count(*) AS n FROM posts WHERE title = 'K'")).toBe(1);
    });

    it("records a first vote, ignores a repeat, applies flips; tallies, heat, history and events follow", async () => {
      const r = repo();
      const post = await r.createPost(author, "Votes", "body", false);
      const before = commits;

      expect((await r.castVote(post.id, "ag_a", 1)).votes).toEqual({ for: 1, against: 0, score: 1 });
      // the same vote again: the same answer, nothing written, nothing enqueued, no wake-up
      const eventsAfterFirst = await voteEventsOf(post.id);
      const historyAfterFirst = await count("SELECT count(*) AS n FROM vote_events WHERE post_id = $1", [post.id]);
      expect((await r.castVote(post.id, "ag_a", 1)).votes).toEqual({ for: 1, against: 0, score: 1 });
      expect(await voteEventsOf(post.id)).toHaveLength(eventsAfterFirst.length);
      expect(await count("SELECT count(*) AS n FROM vote_events WHERE post_id = $1", [post.id])).toBe(
        historyAfterFirst,
      );
      expect(commits).toBe(before + 1);

      expect((await r.castVote(post.id, "ag_a", -1)).votes).toEqual({ for: 0, against: 1, score: -1 });
      expect((await r.castVote(post.id, "ag_b", -1)).votes).toEqual({ for: 0, against: 2, score: -2 });
      const last = await r.castVote(post.id, "ag_a", 1);
      expect(last).toEqual({
        postId: post.id,
        vote: 1,
        votes: { for: 1, against: 1, score: 0 },
        castAt: clock.at.toISOString(),
        movedToAgenda: false,
      });
      expect(commits).toBe(before + 4);

      const row = await postRow(post.id);
      expect({ for: row.votes_for, against: row.votes_against }).toEqual(await counted(post.id));
      expect(row.heat).toBeCloseTo(row.expected_heat, 12);

      // one event per change, completed in SQL, encoded by the catalogue: what the generated encoder writes
      const evs = await voteEventsOf(post.id);
      expect(evs.map((x) => [x.e.voterId, x.e.vote, x.e.previousVote, x.e.votesFor, x.e.votesAgainst])).toEqual([
        ["ag_a", 1, 0, 1, 0],
        ["ag_a", -1, 1, 0, 1],
        ["ag_b", -1, 0, 0, 2],
        ["ag_a", 1, -1, 1, 1],
      ]);
      for (const x of evs) {
        expect(Buffer.from(x.raw).toString("hex")).toBe(
          Buffer.from(events.VoteCast.encode(x.e).finish()).toString("hex"),
        );
        expect(x.e.occurredAt).toBe(clock.at.toISOString());
        expect(x.headers["aps-event-type"]).toBe("forum.vote_cast");
      }
      // the append-only history keeps every change; votesAt reads it
      const hist = await db.pool.query<{ agent_id: string; vote: number }>(
        "SELECT agent_id, vote FROM vote_events WHERE post_id = $1 ORDER BY seq",
        [post.id],
      );
      expect(hist.rows.map((h) => `${h.agent_id}:${h.vote}`)).toEqual(["ag_a:1", "ag_a:-1", "ag_b:-1", "ag_a:1"]);
      const at = await r.votesAt(post.id, new Date(clock.at.getTime() + 1));
      expect(at.next).toBe("");
      expect(at.votes.sort((x, y) => x.agentId.localeCompare(y.agentId))).toEqual([
        { agentId: "ag_a", vote: 1 },
        { agentId: "ag_b", vote: -1 },
      ]);
      expect((await r.getPost(post.id, "ag_b")).myVote).toBe(-1);
    });

    it("votesAt answers a page at a time in agent-id order: every identity once, each vote as it stood (docs/design/votes-and-heat.md#vote-history-and-votesat-paging)", async () => {
      const r = repo();
      const post = await r.createPost(author, "Paged votes", "body", false);
      const voters = ["ag_p1", "ag_p2", "ag_p3", "ag_p4", "ag_p5"];
      for (const [i, v] of voters.entries()) await r.castVote(post.id, v, i % 2 === 0 ? 1 : -1);
      await r.castVote(post.id, "ag_p3", -1); // a flip: the last vote before `at` counts
      const at = new Date(clock.at.getTime() + 1);
      const seen: string[] = [];
      let token = "";
      let pages = 0;
      do {
        const page = await r.votesAt(post.id, at, { pageSize: 2, afterAgentId: token });
        expect(page.votes.length).toBeLessThanOrEqual(2);
        seen.push(...page.votes.map((v) => `${v.agentId}:${v.vote}`));
        token = page.next;
        pages++;
      } while (token && pages < 10);
      expect(pages).toBe(3);
      expect(seen).toEqual(["ag_p1:1", "ag_p2:-1", "ag_p3:-1", "ag_p4:-1", "ag_p5:1"]);
    });

    it("answers not_found for an absent post and writes nothing", async () => {
      const tables = ["votes", "vote_events", "outbox"];
      const before = await Promise.all(tables.map((t) => count(`SELECT count(*) AS n FROM ${t}`)));
      await expect(repo().castVote("p_01HZZZZZZZZZZZZZZZZZZZZZZZ", "ag_a", 1)).rejects.toMatchObject({
        name: "ApsError",
        code: "not_found",
      });
      expect(await Promise.all(tables.map((t) => count(`SELECT count(*) AS n FROM ${t}`)))).toEqual(before);
    });

    it("applies the heat rule once: open proposals with the score among the top N move to the agenda, post_on_agenda before vote_cast", async () => {
      // A schema of its own would be cleaner; instead every proposal here is created far in the
      // future, so the ones of other tests (all older) can never rank ahead of them.
      const r = repo({ agendaMinScore: 3, agendaSize: 2 });
      const base = new Date("2030-01-01T00:00:00Z").getTime();
      clock.at = new Date(base);
      const old = await r.createPost(author, "Old proposal", "body", true);
      clock.at = new Date(base + DAY_MS);
      const q1 = await r.createPost(author, "Newer 1", "body", true);
      clock.at = new Date(base + 2 * DAY_MS);
      const q2 = await r.createPost({ agentId: "ag_q2author", name: "Q2" }, "Newer 2", "body", true);
      const talk = await r.createPost(author, "Discussion", "body", false);
      clock.at = new Date(base + 3 * DAY_MS);

      // score 3 but two open proposals are hotter (a day of age outweighs log10(3)): stays open
      for (const v of ["ag_1", "ag_2", "ag_3"]) await r.castVote(old.id, v, 1);
      expect((await postRow(old.id)).status).toBe("open");
      // a discussion never goes on the agenda
      for (const v of ["ag_1", "ag_2", "ag_3", "ag_4"]) await r.castVote(talk.id, v, 1);
      expect((await postRow(talk.id)).status).toBe("discussion");

      // q2: below the score, then at it and top-ranked → agenda, with the event before the vote's
      await r.castVote(q2.id, "ag_1", 1);
      await r.castVote(q2.id, "ag_2", 1);
      expect((await postRow(q2.id)).status).toBe("open");
      const seqBefore = await count("SELECT coalesce(max(seq), 0) AS n FROM outbox");
      // the vote that fires the rule says so (a dry run's `agenda` effect, docs/design/edge.md#dry-run)
      expect((await r.castVote(q2.id, "ag_3", 1)).movedToAgenda).toBe(true);
      expect((await postRow(q2.id)).status).toBe("agenda");
      const after = {
        rows: (
          await db.pool.query<{ subject: string; fields: Record<string, unknown> }>(
            "SELECT subject, fields FROM outbox WHERE seq > $1 ORDER BY seq",
            [seqBefore],
          )
        ).rows.map((x) => ({ subject: x.subject, payload: encodeEventFields(x.subject, x.fields) })),
      };
      expect(after.rows.map((x) => x.subject)).toEqual(["forum.post_on_agenda", "forum.vote_cast"]);
      const agenda = events.PostOnAgenda.decode(after.rows[0]!.payload);
      expect(agenda).toMatchObject({ postId: q2.id, authorId: "ag_q2author", occurredAt: clock.at.toISOString() });
      expect(Buffer.from(after.rows[0]!.payload).toString("hex")).toBe(
        Buffer.from(events.PostOnAgenda.encode(agenda).finish()).toString("hex"),
      );
      expect(agenda.eventId).not.toBe(events.VoteCast.decode(after.rows[1]!.payload).eventId);

      // never twice, never back: more votes and a flip below the score leave it on the agenda
      expect((await r.castVote(q2.id, "ag_4", 1)).movedToAgenda).toBe(false);
      await r.castVote(q2.id, "ag_1", -1);
      await r.castVote(q2.id, "ag_2", -1);
      expect((await postRow(q2.id)).status).toBe("agenda");
      const onAgenda = (await outbox("forum.post_on_agenda")).map((o) => events.PostOnAgenda.decode(o.payload).postId);
      expect(onAgenda.filter((id) => id === q2.id)).toHaveLength(1);

      // with q2 gone from the open set only q1 is ahead of `old`: its next vote moves it
      await r.castVote(old.id, "ag_4", 1);
      expect((await postRow(old.id)).status).toBe("agenda");
      expect((await postRow(q1.id)).status).toBe("open");
      expect(
        (await outbox("forum.post_on_agenda"))
          .map((o) => events.PostOnAgenda.decode(o.payload).postId)
          .filter((id) => id === old.id),
      ).toHaveLength(1);
    });

    it("a hidden proposal neither moves to the agenda nor holds a place in the rank (docs/design/votes-and-heat.md#the-agenda-rule)", async () => {
      // Far in the future, like the test above, so no proposal of another test ranks ahead.
      const r = repo({ agendaMinScore: 2, agendaSize: 1 });
      const base = new Date("2032-01-01T00:00:00Z").getTime();
      clock.at = new Date(base);
      const older = await r.createPost(author, "Older proposal", "body", true);
      clock.at = new Date(base + DAY_MS);
      const spam = await r.createPost({ agentId: "ag_spammer", name: "S" }, "Hot spam", "body", true);
      clock.at = new Date(base + 2 * DAY_MS);
      await r.moderatePost(spam.id, "spam");

      // the hidden one reaches the score (votes on it are not refused) but stays open
      for (const v of ["ag_1", "ag_2", "ag_3"]) await r.castVote(spam.id, v, 1);
      expect(await postRow(spam.id)).toMatchObject({ status: "open", votes_for: 3 });
      // it is hotter than `older` will be, yet does not take the single place: `older` moves
      await r.castVote(older.id, "ag_1", 1);
      expect((await postRow(older.id)).status).toBe("open");
      await r.castVote(older.id, "ag_2", 1);
      expect((await postRow(older.id)).status).toBe("agenda");
      expect(Number((await postRow(spam.id)).heat)).toBeGreaterThan(Number((await postRow(older.id)).heat));
      expect(
        (await outbox("forum.post_on_agenda")).map((o) => events.PostOnAgenda.decode(o.payload).postId),
      ).not.toContain(spam.id);
    });

    it("counts a +1 toward the agenda once per source; every vote is still recorded, changeable and in the tallies (docs/design/votes-and-heat.md#agenda-score-per-source)", async () => {
      // proposals far in the future (after the heat-rule test's): nothing older ranks ahead of them
      const r = repo({ agendaMinScore: 3, agendaSize: 10 });
      clock.at = new Date("2031-01-01T00:00:00Z");
      const p = await r.createPost(author, "Sybil", "body", true);
      const A = "203.0.113.0/24";
      for (const v of ["ag_s1", "ag_s2", "ag_s3"]) await r.castVote(p.id, v, 1, undefined, A);
      expect(await postRow(p.id)).toMatchObject({ votes_for: 3, votes_against: 0, sources_for: 1, status: "open" });
      // a flip to −1 keeps the source counted while another +1 of it remains; back to +1
      expect((await r.castVote(p.id, "ag_s1", -1, undefined, A)).votes).toEqual({ for: 2, against: 1, score: 1 });
      expect(await postRow(p.id)).toMatchObject({ sources_for: 1, status: "open" });
      await r.castVote(p.id, "ag_s1", 1, undefined, A);
      // a voter without a source is its own (`agent:<id>`): 2 sources
      await r.castVote(p.id, "ag_own", 1);
      expect(await postRow(p.id)).toMatchObject({ votes_for: 4, sources_for: 2, status: "open" });
      // a voter moves: its −1 from B, then its +1 from B — A keeps ag_s2/ag_s3, B joins: 3 → agenda
      await r.castVote(p.id, "ag_s1", -1, undefined, "198.51.100.0/24");
      expect(await postRow(p.id)).toMatchObject({ sources_for: 2, votes_against: 1, status: "open" });
      await r.castVote(p.id, "ag_s1", 1, undefined, "198.51.100.0/24");
      const row = await postRow(p.id);
      expect(row).toMatchObject({ votes_for: 4, votes_against: 0, sources_for: 3, status: "agenda" });
      expect(row.heat).toBeCloseTo(row.expected_heat, 12);
      const s = await sourcesOf(p.id);
      expect(s.kept).toEqual(s.truth);
      expect(s.kept).toEqual([
        { source: "198.51.100.0/24", plus: 1 },
        { source: A, plus: 2 },
        { source: "agent:ag_own", plus: 1 },
      ]);
      // the last source's +1 withdrawn: the counter row goes, the other sources stay
      await r.castVote(p.id, "ag_own", -1, undefined, "192.0.2.0/24");
      expect((await sourcesOf(p.id)).kept.map((x) => x.source)).toEqual(["198.51.100.0/24", A]);
      expect((await postRow(p.id)).sources_for).toBe(2);
    });

    it("keeps exact tallies after many concurrent mixed votes on one post (flips, repeats, racing requests of one identity)", async () => {
      clock.at = new Date("2026-01-11T00:00:00Z");
      const r = repo();
      const post = await r.createPost(author, "Contended", "body", true);
      const seed = Number(process.env.APS_TEST_SEED ?? Date.now() % 2 ** 31);
      const random = seededRandom(seed);
      const AGENTS = 60;
      const plans = Array.from({ length: AGENTS }, () =>
        Array.from({ length: 1 + Math.floor(random() * 6) }, () => (random() < 0.55 ? 1 : -1)),
      );
      const last = new Map<string, 1 | -1>();
      await Promise.all(
        plans.map(async (plan, i) => {
          const agent = `ag_v${i}`;
          for (const [k, v] of plan.entries()) {
            // seven sources; some voters move between them (docs/design/votes-and-heat.md#agenda-score-per-source), some have none
            const source = i % 4 === 3 ? "" : `src-${(i + (i % 3 === 0 ? k : 0)) % 7}`;
            // every fifth agent also sends the opposite vote at the same moment (two tabs racing)
            if (i % 5 === 0)
              await Promise.all([
                r.castVote(post.id, agent, v, undefined, source),
                r.castVote(post.id, agent, -v as 1 | -1, undefined, `src-${k % 7}`),
              ]);
            else {
              const ack = await r.castVote(post.id, agent, v, undefined, source);
              expect(ack.votes!.score).toBe(ack.votes!.for - ack.votes!.against);
              last.set(agent, v);
            }
          }
        }),
      );

      const row = await postRow(post.id);
      const truth = await counted(post.id);
      expect({ seed, tallies: { for: row.votes_for, against: row.votes_against } }).toEqual({ seed, tallies: truth });
      expect(truth.for + truth.against).toBe(AGENTS);
      // the sequential agents' rows hold their last acknowledged vote
      const rows = await db.pool.query<{ agent_id: string; vote: number }>(
        "SELECT agent_id, vote FROM votes WHERE post_id = $1",
        [post.id],
      );
      const stored = new Map(rows.rows.map((x) => [x.agent_id, x.vote]));
      for (const [agent, v] of last) expect({ seed, agent, vote: stored.get(agent) }).toEqual({ seed, agent, vote: v });
      expect(row.heat).toBeCloseTo(row.expected_heat, 12);
      // the per-source counters equal a count of the votes table; sources_for is their number
      const s = await sourcesOf(post.id);
      expect({ seed, kept: s.kept }).toEqual({ seed, kept: s.truth });
      expect({ seed, sourcesFor: s.sourcesFor }).toEqual({ seed, sourcesFor: s.truth.length });

      // the events, in seq order, form one chain: each applies its transition to the previous
      // tallies; one event per history row; the last one carries the final tallies
      const evs = (await voteEventsOf(post.id)).map((x) => x.e);
      expect(evs).toHaveLength(await count("SELECT count(*) AS n FROM vote_events WHERE post_id = $1", [post.id]));
      let f = 0;
      let a = 0;
      for (const [i, e] of evs.entries()) {
        expect(e.previousVote).not.toBe(e.vote);
        f += (e.vote === 1 ? 1 : 0) - (e.previousVote === 1 ? 1 : 0);
        a += (e.vote === -1 ? 1 : 0) - (e.previousVote === -1 ? 1 : 0);
        expect({ seed, i, for: e.votesFor, against: e.votesAgainst }).toEqual({ seed, i, for: f, against: a });
      }
      expect({ for: f, against: a }).toEqual(truth);
    });

    it("group commit (docs/design/votes-and-heat.md#group-commits-in-the-forum): four replicas batching concurrent votes on shared posts never deadlock, and the tallies stay exact", async () => {
      clock.at = new Date("2026-01-12T00:00:00Z");
      // Each replica is its own repository (its own queue, one batch in flight) on the same
      // database; a counting pool shows which statement each vote went through.
      const statements = new Map<string, number[]>();
      /** SQLSTATE of every failed statement (40P01 = deadlock_detected). */
      const failures: string[] = [];
      const counting = new Proxy(db.pool, {
        get(target, prop, receiver) {
          if (prop !== "query") return Reflect.get(target, prop, receiver);
          return (q: unknown, values?: unknown[]) => {
            const named = q as { name?: string; values?: unknown[][] };
            if (named?.name)
              statements.set(named.name, [
                ...(statements.get(named.name) ?? []),
                Array.isArray(named.values?.[0]) ? named.values[0].length : 1,
              ]);
            return target.query(q as string, values).catch((err: { code?: string }) => {
              failures.push(err.code ?? "no code");
              throw err;
            });
          };
        },
      });
      const replicas = Array.from(
        { length: 4 },
        () =>
          new ForumRepository(counting, clock, {
            postsPerDay: 1e6,
            commentsPerDay: 1e6,
            agendaMinScore: 1e6,
            agendaSize: 10,
          }),
      );
      const posts = await Promise.all(
        Array.from({ length: 3 }, (_, i) => replicas[0]!.createPost(author, `Shared ${i}`, "body", true)),
      );
      const seed = Number(process.env.APS_TEST_SEED ?? Date.now() % 2 ** 31);
      const random = seededRandom(seed);
      // 40 agents, each voting 1–8 times in sequence on random posts through random replicas, all
      // agents at once: every batch holds several posts and several agents per post; every second
      // agent also races itself.
      const last = new Map<string, 1 | -1>();
      await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          const agent = `ag_rep${i}`;
          const n = 1 + Math.floor(random() * 8);
          for (let k = 0; k < n; k++) {
            const post = posts[Math.floor(random() * posts.length)]!;
            const v = random() < 0.5 ? 1 : -1;
            const at = Math.floor(random() * replicas.length);
            if (i % 2 === 0) {
              // two tabs racing: the same identity, the same post, opposite votes, two replicas at
              // once — the case where two transactions want the same votes row
              await Promise.all([
                replicas[at]!.castVote(post.id, agent, v),
                replicas[(at + 1) % replicas.length]!.castVote(post.id, agent, -v as 1 | -1),
              ]);
              await replicas[at]!.castVote(post.id, agent, v); // then settle on v
            } else await replicas[at]!.castVote(post.id, agent, v);
            last.set(`${post.id}:${agent}`, v);
          }
        }),
      );
      for (const post of posts) {
        const row = await postRow(post.id);
        const expected = { for: 0, against: 0 };
        for (const [key, v] of last) {
          if (!key.startsWith(`${post.id}:`)) continue;
          if (v === 1) expected.for++;
          else expected.against++;
        }
        expect({ seed, post: post.id, tallies: { for: row.votes_for, against: row.votes_against } }).toEqual({
          seed,
          post: post.id,
          tallies: expected,
        });
        expect(await counted(post.id)).toEqual(expected);
        expect(row.heat).toBeCloseTo(row.expected_heat, 12);
      }
      // the batch statement did carry several votes at once
      expect(Math.max(...(statements.get("forum.cast_votes") ?? [0]))).toBeGreaterThan(1);
      // and no statement failed — no transaction was a deadlock victim (40P01). A batch that fails
      // is retried vote by vote and would still end with exact tallies, so this is the check of
      // the lock order.
      expect({ seed, failures }).toEqual({ seed, failures: [] });
    });

    it("group commit: an absent post in a batch fails only its own vote; the others commit", async () => {
      const r = repo();
      const post = await r.createPost(author, "Batch neighbour", "body", false);
      const settled = await Promise.allSettled([
        r.castVote(post.id, "ag_n1", 1),
        r.castVote("p_01HZZZZZZZZZZZZZZZZZZZZZZZ", "ag_n2", 1),
        r.castVote(post.id, "ag_n3", -1),
      ]);
      expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      expect((settled[1] as PromiseRejectedResult).reason).toMatchObject({ name: "ApsError", code: "not_found" });
      expect(await counted(post.id)).toEqual({ for: 1, against: 1 });
    });
  },
);
