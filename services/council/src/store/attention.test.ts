import { fileURLToPath } from "node:url";
import { createLogger, migrate, openDatabase, PLATFORM_MIGRATIONS_DIR, type Database } from "@aps/platform";
import { createTestDatabase, hasPostgres, SetClock, type TestDatabase } from "@aps/testkit";
import { PROGRESS_DUE_EVERY_MS } from "../rules.js";
import { CouncilAttention } from "./attention.js";
import { CaseActions } from "./case-actions.js";
import { CouncilRepository } from "./repository.js";

/**
 * The Council's attention lists on the real PostgreSQL (docs/design/agents.md#attention): pending ballots nearest deadline first and without the councillor's own, open
 * concerns only on the author's open cases, progress due at the hand-off and again 7 days after
 * the latest update; each capped by its limit with `more`, and each query able to run on its
 * index (the plan with sequential scans disabled names it: the partial indexes' predicates are
 * implied by the queries).
 */
const log = createLogger("council-attention-test", "silent");
const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));
const pgUp = await hasPostgres();
if (!pgUp) console.warn("!! council attention.test.ts: NO POSTGRESQL — the suite is SKIPPED");
const DAY = 86_400_000;

(pgUp ? describe : describe.skip)("council attention lists on the real PostgreSQL (SKIPPED without PostgreSQL)", () => {
  let tdb: TestDatabase;
  let db: Database;
  let clock: SetClock;
  let repo: CouncilRepository;
  let actions: CaseActions;
  let attention: CouncilAttention;
  const t0 = new Date("2026-03-01T12:00:00Z");
  const at = (ms: number) => new Date(t0.getTime() + ms);

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await openDatabase({ url: tdb.url, schema: "council", poolSize: 4, log });
    await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log);
    clock = new SetClock(t0);
    repo = new CouncilRepository(db.pool, clock, 7 * DAY);
    actions = new CaseActions(repo);
    attention = new CouncilAttention(repo);
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  it("pending ballots: open cases without the councillor's ballot, nearest deadline first, capped with more", async () => {
    // three cases opened an hour apart (deadlines in that order); five seats, so none closes
    for (const [i, id] of ["p_b1", "p_b2", "p_b3"].entries()) {
      clock.at = at(i * 3_600_000);
      await repo.nominate(id, "ext_author", "ext_nominator", 5);
    }
    clock.at = at(3 * 3_600_000);
    await repo.castBallot("p_b2", "ext_c1", "reject", "no");
    const all = await attention.pendingBallots("ext_c1", 10);
    expect(all.items.map((b) => b.postId)).toEqual(["p_b1", "p_b3"]);
    expect(all.items[0]).toEqual({
      postId: "p_b1",
      status: "review",
      openedAt: t0.toISOString(),
      deadline: at(7 * DAY).toISOString(),
    });
    expect(all.more).toBe(false);
    expect(await attention.pendingBallots("ext_c1", 1)).toMatchObject({ items: [{ postId: "p_b1" }], more: true });
    // the nominator's approve came with each nomination
    expect((await attention.pendingBallots("ext_nominator", 10)).items).toEqual([]);
  });

  it("open concerns: unresolved, on the author's open cases only, oldest first, capped with more", async () => {
    clock.at = at(DAY);
    await repo.nominate("p_c1", "ext_writer", "ext_nominator", 5);
    await repo.nominate("p_c2", "ext_other", "ext_nominator", 5);
    const k1 = (await actions.raiseConcern("p_c1", "ext_c1", "first")).concerns[0]!.id;
    clock.at = at(DAY + 1000);
    await actions.raiseConcern("p_c1", "ext_c2", "second");
    await actions.raiseConcern("p_c2", "ext_c1", "not the writer's");
    const mine = await attention.openConcerns("ext_writer", 10);
    expect(mine.items.map((c) => [c.postId, c.raisedBy, c.reason])).toEqual([
      ["p_c1", "ext_c1", "first"],
      ["p_c1", "ext_c2", "second"],
    ]);
    expect(await attention.openConcerns("ext_writer", 1)).toMatchObject({ items: [{ reason: "first" }], more: true });
    await actions.resolveConcern("p_c1", k1, "ext_c1", false, "answered");
    expect((await attention.openConcerns("ext_writer", 10)).items.map((c) => c.reason)).toEqual(["second"]);
    // a close leaves the other concern unresolved, but no longer actionable: not listed
    await repo.withdraw("p_c1", "ext_writer", "rethinking");
    expect((await attention.openConcerns("ext_writer", 10)).items).toEqual([]);
  });

  it("progress due: at the hand-off, then PROGRESS_DUE_EVERY_MS after the latest update, for the executor only", async () => {
    clock.at = at(2 * DAY);
    await repo.nominate("p_x1", "ext_author", "ext_c1", 1); // one seat: adopted at once
    await repo.recordHandoff("p_x1", "ext_chief", "task", "ext_exec");
    expect((await repo.get("p_x1")).status).toBe("implementing");
    const due = await attention.progressDue("ext_exec", 10);
    expect(due).toEqual({
      items: [
        {
          postId: "p_x1",
          handoffAt: at(2 * DAY).toISOString(),
          lastReportedAt: "",
          percent: -1,
          dueAt: at(2 * DAY).toISOString(),
        },
      ],
      more: false,
    });
    expect((await attention.progressDue("ext_chief", 10)).items).toEqual([]);
    clock.at = at(3 * DAY);
    await actions.reportProgress("p_x1", "ext_exec", false, 30, "a third");
    expect((await attention.progressDue("ext_exec", 10)).items).toEqual([]);
    clock.at = at(3 * DAY + PROGRESS_DUE_EVERY_MS - 1);
    expect((await attention.progressDue("ext_exec", 10)).items).toEqual([]);
    clock.at = at(3 * DAY + PROGRESS_DUE_EVERY_MS);
    expect((await attention.progressDue("ext_exec", 10)).items).toEqual([
      {
        postId: "p_x1",
        handoffAt: at(2 * DAY).toISOString(),
        lastReportedAt: at(3 * DAY).toISOString(),
        percent: 30,
        dueAt: at(3 * DAY + PROGRESS_DUE_EVERY_MS).toISOString(),
      },
    ]);
    await repo.complete("p_x1", "ext_chief");
    expect((await attention.progressDue("ext_exec", 10)).items).toEqual([]);
  });

  it("each list can run on its index (no sequential scan of cases or concerns needed)", async () => {
    const plan = async (sql: string, params: unknown[]) => {
      const c = await db.pool.connect();
      try {
        await c.query("BEGIN");
        await c.query("SET LOCAL enable_seqscan = off");
        const r = await c.query<{ "QUERY PLAN": string }>(`EXPLAIN ${sql}`, params);
        await c.query("ROLLBACK");
        return r.rows.map((x) => x["QUERY PLAN"]).join("\n");
      } finally {
        c.release();
      }
    };
    // the SQL each list runs, recorded by a pool that answers no rows
    const seen: string[] = [];
    const recording = {
      clock,
      pool: { query: async (sql: string) => (seen.push(sql), { rows: [] }) },
    } as unknown as CouncilRepository;
    const lists = new CouncilAttention(recording);
    await lists.pendingBallots("ext_c1", 5);
    await lists.openConcerns("ext_writer", 5);
    await lists.progressDue("ext_exec", 5);
    const [ballots, concerns, progress] = seen;
    expect(await plan(ballots!, ["ext_c1", 6])).toMatch(/cases_due/);
    const c = await plan(concerns!, ["ext_writer", 6]);
    expect(c).toMatch(/cases_author_open_concerns/);
    expect(c).toMatch(/concerns_unresolved/);
    expect(await plan(progress!, ["ext_exec", t0, PROGRESS_DUE_EVERY_MS, 6])).toMatch(/cases_executor_implementing/);
  });
});
