import { runner } from "node-pg-migrate";
import type { Database } from "./database.js";
import type { Logger } from "../log.js";

/**
 * Applies the versioned SQL migrations in `dir` (one folder or several, merged in file-name order) (files `<timestamp>_<name>.sql` with
 * `-- Up Migration` / `-- Down Migration` sections) to the service's schema with node-pg-migrate.
 * Runs at every start; concurrent starters are serialised by node-pg-migrate's advisory lock, and
 * applied migrations are recorded in `<schema>.pgmigrations`. Throws when a migration fails.
 */
export async function migrate(db: Database, dir: string | string[], log: Logger): Promise<void> {
  const client = await db.pool.connect();
  try {
    await runner({
      dbClient: client,
      dir: (Array.isArray(dir) ? dir : [dir]).map((d) => `${d}/*.sql`),
      useGlob: true,
      direction: "up",
      count: Infinity,
      schema: db.schema,
      createSchema: true,
      migrationsTable: "pgmigrations",
      migrationsSchema: db.schema,
      singleTransaction: true,
      log: (msg: string) => log.debug({ migration: msg }, "migrate"),
    });
  } finally {
    client.release();
  }
}
