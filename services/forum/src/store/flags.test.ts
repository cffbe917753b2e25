import {
  ApsError,
  createLogger,
  metricsRegistry,
  migrate,
  openDatabase,
  PLATFORM_MIGRATIONS_DIR,
  type Database,
} from "@aps/platform";
import { ADMIN_DATABASE_URL, createTestDatabase, hasPostgres, SetClock, type TestDatabase } from "@aps/testkit";
import { ForumRepository } from "./repository.js";
import { FlagStore } from "./flags.js";
import { FUNCTIONS_DIR, MIGRATIONS_DIR } from "./paths.js";

/**
 * Flags per source and the daily flag budget in the forum's store (docs/design/identity-and-abuse.md#community-flags),
 * on the real PostgreSQL: a flag counts toward FLAG_HIDE_THRESHOLD only when no counted flag of the
 * same source is on the target; FLAGS_PER_DAY flags per agent and UTC day, then `quota_exceeded`
 * with Retry-After to the next UTC day and nothing stored; the flag-rate metrics count what was
 * stored, hidden and refused.
 */
const log = createLogger("forum-flags-test", "silent");
const pgUp = await hasPostgres();
if (!pgUp) console.warn(`\n!! flags.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — the suite is SKIPPED.\n`);

/** The value of `name{labels}` in the process registry (0 when absent). */
async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const m = (await metricsRegistry.getSingleMetric(name)?.get())?.values ?? [];
  const hit = m.find((v) => Object.entries(labels).every(([k, x]) => String(v.labels[k]) === x));
  return hit?.value ?? 0;
}

(pgUp ? describe : describe.skip)("flags per source and the daily flag budget (real PostgreSQL)", () => {
  let tdb: TestDatabase;
  let db: Database;
  let repo: ForumRepository;
  let flags: FlagStore;
  const clock = new SetClock(new Date("2026-05-01T22:00:00Z"));
  const author = { agentId: "ag_author", name: "Author" };
  const FLAGS_PER_DAY = 3;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = await openDatabase({ url: tdb.url, schema: "forum", log });
    await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log, { functionsDir: FUNCTIONS_DIR });
    repo = new ForumRepository(db.pool, clock, {
      postsPerDay: 1e6,
      commentsPerDay: 1e6,
      agendaMinScore: 3,
      agendaSize: 10,
    });
    flags = new FlagStore(db.pool, clock, repo.outbox, 3, FLAGS_PER_DAY);
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  const rows = async (sql: string, params: unknown[] = []) => (await db.pool.query(sql, params)).rows;

  it("counts one flag per source toward the threshold; a flag without a source is its flagger's own", async () => {
    const p = await repo.createPost(author, "Spam?", "Body.", false);
    const A = "203.0.113.0/24";
    const counted0 = await metric("aps_flags_total", { reason: "spam", counted: "true" });
    const uncounted0 = await metric("aps_flags_total", { reason: "spam", counted: "false" });
    const hides0 = await metric("aps_flag_hides_total", { target: "post" });
    expect(await flags.flag(p.id, "ag_1", 1, "spam", "", A)).toMatchObject({ counted: true, hidden: false });
    expect(await flags.flag(p.id, "ag_2", 1, "spam", "", A)).toMatchObject({ counted: false, hidden: false });
    expect(await flags.flag(p.id, "ag_3", 1, "spam", "", A)).toMatchObject({ counted: false, hidden: false });
    expect(await flags.flag(p.id, "ag_4", 1, "spam", "")).toMatchObject({ counted: true, hidden: false });
    expect(await flags.flag(p.id, "ag_5", 1, "spam", "", "198.51.100.0/24")).toMatchObject({
      counted: true,
      hidden: true,
    });
    expect(
      await rows("SELECT flagger_id, source, counted FROM flags WHERE target_id = $1 ORDER BY flagger_id", [p.id]),
    ).toEqual([
      { flagger_id: "ag_1", source: A, counted: true },
      { flagger_id: "ag_2", source: A, counted: false },
      { flagger_id: "ag_3", source: A, counted: false },
      { flagger_id: "ag_4", source: "agent:ag_4", counted: true },
      { flagger_id: "ag_5", source: "198.51.100.0/24", counted: true },
    ]);
    // the flag-rate metrics (docs/design/identity-and-abuse.md#community-flags)
    expect(await metric("aps_flags_total", { reason: "spam", counted: "true" })).toBe(counted0 + 3);
    expect(await metric("aps_flags_total", { reason: "spam", counted: "false" })).toBe(uncounted0 + 2);
    expect(await metric("aps_flag_hides_total", { target: "post" })).toBe(hides0 + 1);
  });

  it("FLAGS_PER_DAY per agent and UTC day: then quota_exceeded with Retry-After, nothing stored; refused requests spend none; the next UTC day resets it", async () => {
    const posts = await Promise.all([0, 1, 2, 3].map((i) => repo.createPost(author, `Target ${i}`, "Body.", false)));
    const refused0 = await metric("aps_flags_refused_total", { cause: "budget" });
    // a refused flag (absent target, second flag) spends no budget
    await expect(flags.flag("p_01HZZZZZZZZZZZZZZZZZZZZZZZ", "ag_b", 0, "spam", "")).rejects.toMatchObject({
      code: "not_found",
    });
    await flags.flag(posts[0]!.id, "ag_b", 0, "spam", "");
    await expect(flags.flag(posts[0]!.id, "ag_b", 0, "spam", "")).rejects.toMatchObject({ code: "invalid_state" });
    await flags.flag(posts[1]!.id, "ag_b", 0, "spam", "");
    await flags.flag(posts[2]!.id, "ag_b", 0, "abuse", "");
    const over = await flags.flag(posts[3]!.id, "ag_b", 0, "spam", "").then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(over).toBeInstanceOf(ApsError);
    expect(over).toMatchObject({ code: "quota_exceeded", retryAfterSeconds: 2 * 3600 });
    expect(await rows("SELECT 1 FROM flags WHERE target_id = $1", [posts[3]!.id])).toHaveLength(0);
    expect(await metric("aps_flags_refused_total", { cause: "budget" })).toBe(refused0 + 1);
    // another agent is not affected; the next UTC day the budget is back
    expect(await flags.flag(posts[3]!.id, "ag_c", 0, "spam", "")).toMatchObject({ counted: false });
    clock.at = new Date("2026-05-02T00:00:01Z");
    expect(await flags.flag(posts[3]!.id, "ag_b", 0, "spam", "")).toMatchObject({ targetId: posts[3]!.id });
  });
});
