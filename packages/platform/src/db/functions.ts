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
 * Applies a service's SQL functions (docs/design/services.md#sql-functions-in-files): every `*.sql` file of `dir`
 * (`store/functions/`, one file per function, each a `CREATE OR REPLACE FUNCTION …`), in file-name
 * order, in ONE transaction on `client` (the migration connection: `DATABASE_MIGRATION_URL` when
 * set, docs/design/operations.md#connection-budget-and-pgbouncer), under `pg_advisory_xact_lock` of the schema's migration key — the lock
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

/** One function of a schema as PostgreSQL prints it: `name(argument types)` and its definition. */
interface LiveFunction {
  signature: string;
  def: string;
}

/** The functions of `schema` that no extension owns, by signature, their definitions without the schema. */
async function liveFunctions(client: pg.ClientBase, schema: string): Promise<Map<string, string>> {
  const r = await client.query<LiveFunction>(
    `SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' AS signature,
            pg_get_functiondef(p.oid) AS def
       FROM pg_proc p
      WHERE p.pronamespace = $1::regnamespace
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')`,
    [schema],
  );
  // the header names the function with its schema (`CREATE OR REPLACE FUNCTION forum.heat(`)
  return new Map(r.rows.map((f) => [f.signature, f.def.replace(`FUNCTION ${schema}.`, "FUNCTION ")]));
}

/**
 * How the live functions of `schema` differ from the files of `dir` (docs/design/services.md#sql-functions-in-files): the files are
 * applied to a scratch schema inside a transaction that is rolled back, and each function's
 * definition (`pg_get_functiondef`, schema names removed) is compared with the live one. Returns
 * one line per difference — `changed: f(args)`, `missing: f(args)` (in a file, not live), `extra:
 * f(args)` (live, in no file; extension functions aside) — empty when they agree. Needs CREATE on
 * the database (the scratch schema); for tests and checks, not the request path.
 */
export async function functionDrift(client: pg.ClientBase, schema: string, dir: string): Promise<string[]> {
  const probe = `aps_fn_probe_${process.pid}_${Date.now()}`;
  await client.query("BEGIN");
  try {
    await client.query(`CREATE SCHEMA ${probe}`);
    await client.query(`SET LOCAL search_path TO ${probe}`);
    for (const f of functionFiles(dir)) await client.query(f.sql);
    const want = await liveFunctions(client, probe);
    const live = await liveFunctions(client, schema);
    const drift: string[] = [];
    for (const [sig, def] of want)
      if (!live.has(sig)) drift.push(`missing: ${sig}`);
      else if (live.get(sig) !== def) drift.push(`changed: ${sig}`);
    for (const sig of live.keys()) if (!want.has(sig)) drift.push(`extra: ${sig}`);
    return drift.sort();
  } finally {
    await client.query("ROLLBACK");
  }
}
