import { createLogger, migrate, openDatabase, PLATFORM_MIGRATIONS_DIR, type Clock, type Database } from "@aps/platform";
import { createTestDatabase, type TestDatabase } from "@aps/testkit";
import { ForumRepository, type ForumLimits } from "./repository.js";
import { FUNCTIONS_DIR, MIGRATIONS_DIR } from "./paths.js";

/**
 * Test fixture (not built into dist): the forum's store on a fresh database of the real
 * PostgreSQL (testkit), migrated with the forum's migrations and functions, and a repository on
 * it with limits no test reaches (1e6 posts and comments a day, agenda score 3, agenda size 10).
 * `drop()` closes the pool and drops the database.
 */
export interface ForumTestStore {
  db: Database;
  repo: ForumRepository;
  drop(): Promise<void>;
}

/**
 * Creates and migrates a forum database; the repository reads `clock`. `opts.limits` replaces
 * some of the limits above; `opts.poolSize` is the pool's size (default openDatabase's).
 */
export async function forumTestStore(
  name: string,
  clock: Clock,
  opts: { limits?: Partial<ForumLimits>; poolSize?: number } = {},
): Promise<ForumTestStore> {
  const log = createLogger(name, "silent");
  const tdb: TestDatabase = await createTestDatabase();
  const db = await openDatabase({
    url: tdb.url,
    schema: "forum",
    log,
    ...(opts.poolSize ? { poolSize: opts.poolSize } : {}),
  });
  await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log, { functionsDir: FUNCTIONS_DIR });
  const repo = new ForumRepository(db.pool, clock, {
    postsPerDay: 1e6,
    commentsPerDay: 1e6,
    agendaMinScore: 3,
    agendaSize: 10,
    ...opts.limits,
  });
  return {
    db,
    repo,
    drop: async () => {
      await db.close();
      await tdb.drop();
    },
  };
}
