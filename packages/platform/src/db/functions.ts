import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type pg from "pg";
import type { Logger } from "../log.js";
import { lockValueFor } from "./migration-lock.js";

/** One SQL file of a service's functions folder: its name and text. */
export interface FunctionFile {
  file: string;
  sql: string;
}

/** The `*.sql` files of `dir` in file-name order (the order `applyFunctions` runs them). */
export function functionFiles(dir: string): FunctionFile[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .map((file) => ({ file, sql: readFileSync(join(dir, file), "utf8") }));
}

/**
 * Applies a service's SQL functions (docs/adr/0180): every `*.sql` file of `dir`
 * (`store/functions/`, one file per function, each a `CREATE OR REPLACE FUNCTION …`), in file-name
 * order, in ONE transaction on `client` (the migration connection: `DATABASE_MIGRATION_URL` when
 * set, docs/adr/0169), under `pg_advisory_xact_lock` of the schema's migration key — the lock
 * node-pg-migrate holds while migrating, so replicas starting together do not replace a function
 * concurrently ("tuple concurrently updated"). Runs after the migrations at every start, so the
 * live definition of a function is always its file's, on a fresh database and on an upgraded one
 * alike; a migration only drops a function that is gone or changes its signature (CREATE OR
 * REPLACE cannot change argument or result types). Throws (and changes nothing) when a file fails.
 */
export async function applyFunctions(client: pg.ClientBase, schema: string, dir: string, log: Logger): Promise<void> {
  const files = functionFiles(dir);
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock($1)", [lockValueFor(schema)]);
    for (const f of files) {
      try {
        await client.query(f.sql);
      } catch (err) {
        throw new Error(`SQL function file ${f.file}: ${err instanceof Error ? err.message : String(err)}`, {
          cause: err,
        });
      }
    }
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  }
  log.debug({ functions: files.map((f) => f.file) }, "SQL functions applied");
}
