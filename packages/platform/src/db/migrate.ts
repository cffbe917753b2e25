import { readdirSync } from "node:fs";
import { basename } from "node:path";
import pg from "pg";
import { searchPathOption, type Database } from "./database.js";
import type { Logger } from "../log.js";
import { applyFunctions } from "./functions.js";
import { lockValueFor } from "./migration-lock.js";

/**
 * Applies the versioned SQL migrations in `dir` (one folder or several, merged in file-name order) (files `<timestamp>_<name>.sql` with
 * `-- Up Migration` / `-- Down Migration` sections) to the service's schema with node-pg-migrate.
 * Runs at every start; concurrent starters are serialised by node-pg-migrate's advisory lock, and
 * applied migrations are recorded in `<schema>.pgmigrations`. Throws when a migration fails.
 * With `db.migrationUrl` (`DATABASE_MIGRATION_URL`) it connects there, to the server directly:
 * that lock is held by the session, which a PgBouncer in transaction mode does not keep
 * (docs/design/operations.md#connection-budget-and-pgbouncer).
 * Then, with `opts.functionsDir`, the service's SQL functions are (re)applied from their files on
 * the same connection under the same lock key (`applyFunctions`, docs/design/services.md#sql-functions-in-files).
 * With `db.migrations` "verify" (`DATABASE_MIGRATIONS=verify`: the chart's migration Job applies
 * them, docs/operations/upgrading.md) nothing is applied: it throws MissingMigrationsError when a
 * migration of `dir` is not recorded as applied (see verifyMigrations).
 */
export async function migrate(
  db: Database,
  dir: string | string[],
  log: Logger,
  opts: { functionsDir?: string } = {},
): Promise<void> {
  if (db.migrations === "verify") {
    await verifyMigrations(db, dir);
    log.info({ schema: db.schema }, "migrations verified (applied by the migration job)");
    return;
  }
  if (db.migrationUrl) {
    const direct = new pg.Client({
      connectionString: db.migrationUrl,
      options: searchPathOption(db.schema),
      application_name: `aps-${db.schema}-migrate`,
    });
    let lost: Error | undefined;
    direct.on("error", (err) => void (lost = err));
    await direct.connect();
    try {
      await runMigrations(direct, db.schema, dir, log);
      if (opts.functionsDir) await applyFunctions(direct, db.schema, opts.functionsDir, log);
      if (lost) throw lost;
    } finally {
      await direct.end().catch(() => undefined);
    }
    return;
  }
  const client = await db.pool.connect();
  // A lost connection must fail the migration, not crash the process (see withTransaction).
  let lost: Error | undefined;
  const onError = (err: Error) => void (lost = err);
  client.on("error", onError);
  try {
    await runMigrations(client, db.schema, dir, log);
    if (opts.functionsDir) await applyFunctions(client, db.schema, opts.functionsDir, log);
  } finally {
    client.removeListener("error", onError);
    client.release(lost);
  }
}

/**
 * node-pg-migrate's `up` of every migration in `dir` on `client`, under the schema's advisory lock.
 * A schema that already records every migration of `dir` (every start but the first of a release)
 * is left as it is without loading node-pg-migrate: its import is ~130 ms of CPU, a sixth of a
 * service's start (docs/design/services.md#migrations).
 */
async function runMigrations(
  client: pg.ClientBase,
  schema: string,
  dir: string | string[],
  log: Logger,
): Promise<void> {
  if ((await unappliedMigrations(client, schema, dir)).length === 0) {
    log.debug({ schema }, "migrations up to date");
    return;
  }
  const { runner } = await import("node-pg-migrate");
  await runner({
    dbClient: client,
    dir: (Array.isArray(dir) ? dir : [dir]).map((d) => `${d}/*.sql`),
    useGlob: true,
    direction: "up",
    count: Infinity,
    schema,
    // openDatabase has made sure it exists; node-pg-migrate's CREATE SCHEMA IF NOT EXISTS would
    // need CREATE on the database, which a per-service role lacks (docs/design/services.md#caller-policy-and-internal-trust).
    createSchema: false,
    migrationsTable: "pgmigrations",
    migrationsSchema: schema,
    singleTransaction: true,
    // One lock per schema: services sharing a database migrate side by side, while replicas
    // of one service wait for each other.
    lockValue: lockValueFor(schema),
    advisoryLockMode: "wait",
    log: (msg: string) => log.debug({ migration: msg }, "migrate"),
  });
}

/** The migration names of `dir` (one folder or several), as node-pg-migrate records them: file names without `.sql`. */
export function migrationNames(dir: string | string[]): string[] {
  return (Array.isArray(dir) ? dir : [dir])
    .flatMap((d) => readdirSync(d).filter((f) => f.endsWith(".sql")))
    .map((f) => basename(f, ".sql"))
    .sort();
}

/**
 * A schema lacks migrations that the starting code needs (`DATABASE_MIGRATIONS=verify`): the
 * migration Job of this release has not run, or failed. `missing` lists them in order.
 */
export class MissingMigrationsError extends Error {
  constructor(
    readonly schema: string,
    readonly missing: string[],
  ) {
    super(
      `schema ${schema} lacks ${missing.length} migration(s) this code needs (${missing.join(", ")}); ` +
        "DATABASE_MIGRATIONS=verify applies none: run the migration job first (APS_MIGRATE_ONLY=1, docs/operations/upgrading.md)",
    );
    this.name = "MissingMigrationsError";
  }
}

/**
 * Checks, applying nothing, that every migration of `dir` is recorded in `<schema>.pgmigrations`
 * (a newer schema than the code — a rollback of the image — is fine: migrations only expand,
 * docs/operations/upgrading.md). Reads through `db.pool`. Throws MissingMigrationsError, naming
 * them, when some are missing (all of them when the table does not exist).
 */
export async function verifyMigrations(db: Database, dir: string | string[]): Promise<void> {
  const missing = await unappliedMigrations(db.pool, db.schema, dir);
  if (missing.length > 0) throw new MissingMigrationsError(db.schema, missing);
}

/**
 * The migrations of `dir` not recorded in `<schema>.pgmigrations`, in file-name order (all of
 * them when the table does not exist). Two reads through `q`; applies nothing.
 */
async function unappliedMigrations(
  q: Pick<pg.ClientBase, "query">,
  schema: string,
  dir: string | string[],
): Promise<string[]> {
  const table = await q.query<{ exists: boolean }>("SELECT to_regclass($1) IS NOT NULL AS exists", [
    `${schema}.pgmigrations`,
  ]);
  const applied = new Set(
    table.rows[0]?.exists
      ? (await q.query<{ name: string }>(`SELECT name FROM ${schema}.pgmigrations`)).rows.map((r) => r.name)
      : [],
  );
  return migrationNames(dir).filter((n) => !applied.has(n));
}
