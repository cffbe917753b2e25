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
  // A lost connection must fail the migration, not crash the process (see withTransaction).
  let lost: Error | undefined;
  const onError = (err: Error) => void (lost = err);
  client.on("error", onError);
  try {
    await runner({
      dbClient: client,
      dir: (Array.isArray(dir) ? dir : [dir]).map((d) => `${d}/*.sql`),
      useGlob: true,
      direction: "up",
      count: Infinity,
      schema: db.schema,
      // openDatabase has made sure it exists; node-pg-migrate's CREATE SCHEMA IF NOT EXISTS would
      // need CREATE on the database, which a per-service role lacks (docs/adr/0119).
      createSchema: false,
      migrationsTable: "pgmigrations",
      migrationsSchema: db.schema,
      singleTransaction: true,
      // One lock per schema: services sharing a database migrate side by side, while replicas
      // of one service wait for each other.
      lockValue: lockValueFor(db.schema),
      advisoryLockMode: "wait",
      log: (msg: string) => log.debug({ migration: msg }, "migrate"),
    });
  } finally {
    client.removeListener("error", onError);
    client.release(lost);
  }
}

/** A stable 31-bit advisory-lock key for `schema` (FNV-1a). */
function lockValueFor(schema: string): number {
  let h = 0x811c9dc5;
  for (const ch of schema) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return h & 0x7fffffff;
}
