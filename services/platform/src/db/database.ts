import { mkdirSync } from "node:fs";
import pg from "pg";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import type { Logger } from "../log.js";
import { isDatabaseUnavailable } from "../errors.js";

/**
 * One service's PostgreSQL, reached only through `pg` whichever way it runs (DESIGN.md §3):
 * a real server from a connection URL, or the embedded PGlite (real PostgreSQL in WASM) served
 * on a loopback socket by pglite-socket. `pool` is set to the service's own schema.
 */
export interface Database {
  readonly pool: pg.Pool;
  /** The schema this service owns (every table lives there; `search_path` points at it). */
  readonly schema: string;
  /** "postgres" for a real server, "pglite" for the embedded one. */
  readonly kind: "postgres" | "pglite";
  /** Ends the pool and, for the embedded database, stops its socket server and closes the files. */
  close(): Promise<void>;
}

/** How to reach a service's database: `url` wins; otherwise `embeddedDir` holds a PGlite data folder. */
export interface DatabaseOptions {
  url?: string | undefined;
  embeddedDir?: string | undefined;
  /** Schema name, `[a-z_]+`. */
  schema: string;
  /** Pool size for a real server (default 5 per service and process). The embedded database serialises anyway. */
  poolSize?: number;
  log: Logger;
}

/**
 * Opens the database described by `opts`. Throws when neither `url` nor `embeddedDir` is given,
 * or when the server cannot be reached at all (the pool then reconnects by itself later).
 */
export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  if (!/^[a-z_][a-z0-9_]*$/.test(opts.schema)) throw new Error(`bad schema name ${opts.schema}`);
  if (opts.url) {
    const pool = new pg.Pool({
      connectionString: opts.url,
      max: opts.poolSize ?? 5,
      connectionTimeoutMillis: 5_000,
      // search_path as a startup parameter: every connection lands in the service's schema.
      options: `-c search_path=${opts.schema}`,
    });
    wirePool(pool, opts);
    await createSchema(pool, opts.schema);
    return { pool, schema: opts.schema, kind: "postgres", close: () => pool.end() };
  }
  if (!opts.embeddedDir) throw new Error("openDatabase: give a DATABASE_URL or an embedded data folder");
  mkdirSync(opts.embeddedDir, { recursive: true });
  const db = await PGlite.create(opts.embeddedDir);
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 1 });
  await server.start();
  const [host, port] = server.getServerConn().split(":");
  // PGlite is one backend session shared by every socket connection, so the search_path is set
  // once for the session and stored on the database for the next start.
  const pool = new pg.Pool({ host, port: Number(port), user: "postgres", database: "postgres", max: 1, idleTimeoutMillis: 0 });
  wirePool(pool, opts);
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${opts.schema}"`);
  await pool.query(`ALTER DATABASE postgres SET search_path TO "${opts.schema}"`);
  await pool.query(`SET search_path TO "${opts.schema}"`);
  return {
    pool,
    schema: opts.schema,
    kind: "pglite",
    close: async () => {
      await pool.end();
      await server.stop();
      await db.close();
    },
  };
}

function wirePool(pool: pg.Pool, opts: DatabaseOptions): void {
  // An idle client losing its server (PostgreSQL restart) must not crash the process: the pool
  // drops it and the next query opens a new connection.
  pool.on("error", (err) => opts.log.warn({ err: err.message }, "idle database connection lost"));
}

/**
 * The readiness probe of `db` for `startGrpcServer` (docs/adr/0075): `SELECT 1` on the service's
 * pool for a real PostgreSQL server; none for the embedded PGlite, which lives in the process
 * (it cannot become unreachable) and serialises every query on one connection, so a slow probe
 * there would only mean "busy".
 */
export function readinessProbe(db: Database): (() => Promise<unknown>) | undefined {
  return db.kind === "postgres" ? () => db.pool.query("SELECT 1") : undefined;
}

/**
 * `CREATE SCHEMA IF NOT EXISTS` under a transaction-level advisory lock keyed by the schema name:
 * replicas starting at the same moment would otherwise race in PostgreSQL's catalog (the loser
 * fails with a unique violation on pg_namespace despite IF NOT EXISTS).
 */
async function createSchema(pool: pg.Pool, schema: string): Promise<void> {
  const c = await pool.connect();
  try {
    await c.query("BEGIN");
    await c.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`aps-create-schema:${schema}`]);
    await c.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await c.query("COMMIT");
  } catch (err) {
    await c.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    c.release();
  }
}

/** A client checked out for one transaction. */
export type Tx = pg.PoolClient;

/**
 * Runs `fn` inside one transaction (READ COMMITTED) and commits, or rolls back and rethrows.
 * Everything `fn` does must go through `tx`: another pool query inside would wait for this
 * transaction's connection on the embedded database.
 */
export async function withTransaction<T>(pool: pg.Pool, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const tx = await pool.connect();
  let broken: Error | undefined;
  try {
    await tx.query("BEGIN");
    const out = await fn(tx);
    await tx.query("COMMIT");
    return out;
  } catch (err) {
    await tx.query("ROLLBACK").catch(() => undefined);
    // A connection that failed (server restarted, socket reset) is destroyed, never pooled again.
    broken = isDatabaseUnavailable(err) ? (err as Error) : undefined;
    throw err;
  } finally {
    tx.release(broken);
  }
}
