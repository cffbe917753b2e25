import { createLogger, migrate, openDatabase, PLATFORM_MIGRATIONS_DIR, type Database } from "@aps/platform";
import {
  ADMIN_DATABASE_URL,
  createTestDatabase,
  hasPostgres,
  seededRandom,
  SetClock,
  type TestDatabase,
} from "@aps/testkit";
import { agendaScore, heat, movesToAgenda } from "./heat.js";
import { ForumRepository } from "./store/repository.js";
import { FUNCTIONS_DIR, MIGRATIONS_DIR } from "./store/paths.js";

/**
 * The heat rule's TypeScript home (heat.ts) and its one source of truth with the SQL the vote runs
 * (store/functions/heat.sql, cast_vote.sql; docs/design/votes-and-heat.md, docs/design/services.md#sql-functions-in-files): the formula's properties,
 * then, on the real PostgreSQL, the same heat for thousands of inputs and the same agenda moves as
 * a model built on heat.ts over 300 random votes.
 */
const log = createLogger("forum-heat-test", "silent");
const pgUp = await hasPostgres();
if (!pgUp) console.warn(`\n!! heat.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — the TS ≡ SQL part is SKIPPED.\n`);

const T0 = new Date("2023-11-14T22:13:20Z"); // 1 700 000 000 s: the age term's zero

describe("heat (docs/design/council.md#statuses-and-the-lifecycle-rule)", () => {
  it("is the signed decimal log of the score plus the age term", () => {
    expect(heat(0, T0)).toBe(0);
    expect(heat(1, T0)).toBe(0);
    expect(heat(-1, T0)).toBe(0);
    expect(heat(10, T0)).toBeCloseTo(1, 15);
    expect(heat(-100, T0)).toBeCloseTo(-2, 15);
    // 45 000 s of age are worth one decade of score
    expect(heat(1, new Date(T0.getTime() + 45_000_000))).toBeCloseTo(heat(10, T0), 12);
  });

  it("grows with the score and with the creation time", () => {
    const rnd = seededRandom(14);
    for (let i = 0; i < 500; i++) {
      const s = Math.floor(rnd() * 2000) - 1000;
      const at = new Date(T0.getTime() + Math.floor(rnd() * 1e11));
      expect(heat(s + 1, at)).toBeGreaterThanOrEqual(heat(s, at));
      expect(heat(s, new Date(at.getTime() + 1000))).toBeGreaterThan(heat(s, at));
    }
  });

  it("moves an open proposal with the score among the top N, and nothing else", () => {
    const limits = { agendaMinScore: 3, agendaSize: 2 };
    const open = { isArchDesign: true, status: "open", score: agendaScore(4, 1), ahead: 1 };
    expect(movesToAgenda(open, limits)).toBe(true);
    expect(movesToAgenda({ ...open, ahead: 2 }, limits)).toBe(false);
    expect(movesToAgenda({ ...open, score: 2 }, limits)).toBe(false);
    expect(movesToAgenda({ ...open, isArchDesign: false, status: "discussion" }, limits)).toBe(false);
    expect(movesToAgenda({ ...open, status: "agenda" }, limits)).toBe(false);
    expect(movesToAgenda({ ...open, status: "review" }, limits)).toBe(false);
  });
});

(pgUp ? describe : describe.skip)("heat.ts ≡ the SQL of the vote (real PostgreSQL)", () => {
  let tdb: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await openDatabase({ url: tdb.url, schema: "forum", log });
    await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log, { functionsDir: FUNCTIONS_DIR });
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  it("the SQL heat() equals heat.ts on 5,000 random scores and instants", async () => {
    const rnd = seededRandom(2026);
    const scores: number[] = [];
    const ats: Date[] = [];
    for (let i = 0; i < 5000; i++) {
      const big = rnd() < 0.2;
      scores.push(Math.floor((rnd() - 0.5) * (big ? 2e6 : 40)));
      ats.push(new Date(T0.getTime() + Math.floor((rnd() - 0.3) * 3e11)));
    }
    const r = await db.pool.query<{ h: number }>(
      "SELECT heat(s, c) AS h FROM unnest($1::integer[], $2::timestamptz[]) WITH ORDINALITY AS u(s, c, o) ORDER BY o",
      [scores, ats],
    );
    const differ = r.rows
      .map((row, i) => ({ s: scores[i]!, at: ats[i]!.toISOString(), sql: row.h, ts: heat(scores[i]!, ats[i]!) }))
      .filter((x) => Math.abs(x.sql - x.ts) > 1e-12 * Math.max(1, Math.abs(x.ts)));
    expect(differ).toEqual([]);
  });

  it("cast_vote moves exactly the posts a model built on heat.ts moves, over 300 random votes", async () => {
    const limits = { agendaMinScore: 3, agendaSize: 3 };
    const clock = new SetClock(new Date("2035-01-01T00:00:00Z"));
    const repo = new ForumRepository(db.pool, clock, { postsPerDay: 1e6, commentsPerDay: 1e6, ...limits });
    const rnd = seededRandom(154);
    interface Model {
      id: string;
      createdAt: Date;
      isArchDesign: boolean;
      status: string;
      votes: Map<string, { vote: 1 | -1; source: string }>;
    }
    const posts: Model[] = [];
    for (let i = 0; i < 14; i++) {
      clock.at = new Date(clock.at.getTime() + Math.floor(rnd() * 40_000_000));
      const arch = i % 4 !== 3;
      const p = await repo.createPost({ agentId: `ag_author${i}`, name: "A" }, `Proposal ${i}`, "body", arch);
      posts.push({ id: p.id, createdAt: clock.at, isArchDesign: arch, status: p.status, votes: new Map() });
    }
    const scoreOf = (p: Model) => {
      const plusSources = new Set([...p.votes.values()].filter((v) => v.vote === 1).map((v) => v.source));
      const against = [...p.votes.values()].filter((v) => v.vote === -1).length;
      return agendaScore(plusSources.size, against);
    };
    const heatOf = (p: Model) => heat(scoreOf(p), p.createdAt);
    for (let i = 0; i < 300; i++) {
      const p = posts[Math.floor(rnd() * posts.length)]!;
      const voter = `ag_v${Math.floor(rnd() * 12)}`;
      const vote: 1 | -1 = rnd() < 0.6 ? 1 : -1;
      const source = rnd() < 0.5 ? `198.51.100.${Math.floor(rnd() * 3)}/24` : "";
      clock.at = new Date(clock.at.getTime() + 1000);
      await repo.castVote(p.id, voter, vote, undefined, source);
      // the model: the same vote again changes nothing; a change re-applies the rule to p
      if (p.votes.get(voter)?.vote !== vote) {
        p.votes.set(voter, { vote, source: source || `agent:${voter}` });
        const h = heatOf(p);
        const ahead = posts.filter(
          (q) => q.isArchDesign && q.status === "open" && (heatOf(q) > h || (heatOf(q) === h && q.id > p.id)),
        ).length;
        if (movesToAgenda({ ...p, score: scoreOf(p), ahead: Math.min(ahead, limits.agendaSize) }, limits))
          p.status = "agenda";
      }
      const rows = await db.pool.query<{ id: string; status: string; heat: number }>(
        "SELECT id, status, heat FROM posts WHERE id = ANY($1::text[])",
        [posts.map((q) => q.id)],
      );
      const sql = new Map(rows.rows.map((row) => [row.id, row]));
      expect(posts.map((q) => [q.id, sql.get(q.id)!.status])).toEqual(posts.map((q) => [q.id, q.status]));
      for (const q of posts) expect(sql.get(q.id)!.heat).toBeCloseTo(heatOf(q), 12);
    }
    // the run exercised the rule: some proposals moved, some stayed open
    expect(posts.filter((q) => q.status === "agenda").length).toBeGreaterThan(0);
    expect(posts.filter((q) => q.isArchDesign && q.status === "open").length).toBeGreaterThan(0);
  });
});
