import pg from "pg";
import type { Logger } from "../log.js";
import { isDatabaseUnavailable } from "../errors.js";
import { registerPool } from "../metrics.js";
import { dryRunAware, inDryRun } from "./dry-run.js";

/**
 * One service's PostgreSQL schema, reached through a `pg` pool whichever way APS runs: a
 * PostgreSQL server from a connection URL — in the all-in-one, the embedded server it starts
 * (docs/design/services.md#embedded-postgresql); in the distributed mode, the platform's. `pool` lands in the service's own
 * schema (docs/design/services.md#one-schema-per-service).
 */
export interface Database {
  readonly pool: pg.Pool;
  /** The schema this service owns (every table lives there; `search_path` points at it). */
  readonly schema: string;
  /**
   * Ends the pool and resolves once every connection is closed (the server has seen each one go),
   * or after {@link CLOSE_WAIT_MS} at most: pg's `pool.end()` resolves as the clients' ends begin,
   * and a server stopped right after (the all-in-one's embedded one) cut them mid-goodbye.
   */
  close(): Promise<void>;
  /**
   * Where migrations connect, when not through `pool` (`DATABASE_MIGRATION_URL`): a direct
   * server URL, since node-pg-migrate holds a session-level advisory lock that a PgBouncer in
   * transaction mode cannot keep (docs/design/operations.md#connection-budget-and-pgbouncer). Absent: migrations use `pool`.
   */
  readonly migrationUrl?: string | undefined;
  /** What sits between `pool` and the server (`DATABASE_POOLER`, docs/design/operations.md#connection-budget-and-pgbouncer); absent = "none". */
  readonly pooler?: Pooler;
  /** Whether `migrate` applies the migrations or only checks them (`DATABASE_MIGRATIONS`); absent = "apply". */
  readonly migrations?: MigrationMode;
}

/**
 * What a starting service does with its schema's migrations (`DATABASE_MIGRATIONS`,
 * docs/operations/upgrading.md): `apply` — applies what is missing and re-applies its SQL
 * functions (the all-in-one, `npm start`, compose); `verify` — applies nothing and refuses to start
 * while a migration of its code is missing: the chart's migration Job (`APS_MIGRATE_ONLY=1`, a
 * pre-install/pre-upgrade hook) has applied them once before any pod of the release starts.
 */
export type MigrationMode = "apply" | "verify";

/**
 * What `DATABASE_URL` reaches (`DATABASE_POOLER`, docs/design/operations.md#connection-budget-and-pgbouncer): `none` — a
 * PostgreSQL server, so a connection keeps its session state; `transaction` — a PgBouncer in
 * transaction mode, which may hand each transaction to another server connection: no startup
 * `options` (PgBouncer refuses them; its per-service database entry sets `search_path` with
 * `connect_query`), no named prepared statements (namedStatement), no session-level settings.
 */
export type Pooler = "none" | "transaction";

/** How to reach a service's database. */
export interface DatabaseOptions {
  /** `postgres://…` connection URL (DATABASE_URL or `<SERVICE>_DATABASE_URL`). */
  url: string | undefined;
  /** Schema name, `[a-z_]+`. */
  schema: string;
  /** Connections in the pool (default 5 per service and process). */
  poolSize?: number;
  /** How long an idle connection is kept before it is closed, ms (default 10 000, pg's own). */
  idleTimeoutMs?: number;
  /** Direct server URL for migrations (Database.migrationUrl); absent = through the pool. */
  migrationUrl?: string | undefined;
  /** What `url` reaches (default "none", see Pooler). */
  pooler?: Pooler;
  /** Longest a query waits for a pool connection, ms (default POOL_WAIT_MS; `DATABASE_POOL_WAIT_MS`). */
  poolWaitMs?: number;
  /** Apply or only verify the migrations at start (default "apply", see MigrationMode). */
  migrations?: MigrationMode;
  /**
   * Longest a connection lives, seconds; 0 or absent = no limit. An expired connection is closed
   * when it is next idle, never under a query (pg-pool's maxLifetimeSeconds; DATABASE_MAX_LIFETIME_SECONDS).
   */
  maxLifetimeSeconds?: number;
  log: Logger;
}

/** The pool part of DatabaseOptions: how many connections a service keeps, and for how long. */
export type PoolSizing = Pick<DatabaseOptions, "poolSize" | "idleTimeoutMs">;

/** The pooler behind each pool opened by openDatabase (for namedStatement). */
const poolers = new WeakMap<pg.Pool, Pooler>();

/**
 * `name` for a named (server-side prepared) statement on `pool`, or undefined when `pool` reaches
 * a PgBouncer in transaction mode (docs/design/operations.md#connection-budget-and-pgbouncer): there the next transaction may run on a server
 * connection that never prepared it ("prepared statement does not exist"), so the statement is
 * sent unnamed (parsed each time) instead.
 */
export function namedStatement(pool: pg.Pool, name: string): string | undefined {
  return poolers.get(pool) === "transaction" ? undefined : name;
}

/**
 * `pool` for a library that names its statements (rate-limiter-flexible's `rate_limits:rlflx-get`,
 * prepared on the server), its statements sent unnamed: behind PgBouncer in transaction mode the
 * next transaction may run on a server connection that never prepared one ("does not exist") or
 * already did for another client ("already exists") — as the production rehearsal saw after a
 * PgBouncer roll (docs/design/services.md#pools-and-the-connection-budget). Only `query` is kept.
 */
export function unnamedStatements(pool: pg.Pool): Pick<pg.Pool, "query"> {
  const query = (q: { text: string; values?: unknown[] }) => pool.query({ text: q.text, values: q.values ?? [] });
  return { query: query as pg.Pool["query"] };
}

/**
 * Longest a query waits for a pool connection — queued behind a burst, or opening a new one —
 * before it fails with "timeout exceeded when trying to connect" (a 503 `upstream_unavailable`),
 * ms. Below the gateway's 10 s gRPC deadline (DEFAULT_DEADLINE_MS, which exists so a burst of
 * writes can queue for a connection, docs/design/services.md#typed-clients), with 2 s left for the work itself; it was
 * 5 s, which cut such a burst off at half the deadline (docs/design/services.md#deadlines-and-pool-wait).
 */
export const POOL_WAIT_MS = 8_000;

/**
 * Opens the database described by `opts` and creates the service's schema. Throws when no `url`
 * is given (a service on its own needs DATABASE_URL; `npm start` provides an embedded server),
 * or when the server cannot be reached at all (the pool then reconnects by itself later).
 */
export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  if (!/^[a-z_][a-z0-9_]*$/.test(opts.schema)) throw new Error(`bad schema name ${opts.schema}`);
  if (!opts.url)
    throw new Error(
      `no database for the ${opts.schema} service: set DATABASE_URL (or ${opts.schema.toUpperCase()}_DATABASE_URL), or run the all-in-one (npm start), which starts an embedded PostgreSQL`,
    );
  const pooler = opts.pooler ?? "none";
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.poolSize ?? 5,
    idleTimeoutMillis: opts.idleTimeoutMs ?? 10_000,
    maxLifetimeSeconds: opts.maxLifetimeSeconds ?? 0,
    connectionTimeoutMillis: opts.poolWaitMs ?? POOL_WAIT_MS,
    // search_path as a startup parameter: every connection lands in the service's schema (behind
    // PgBouncer, its database entry's connect_query sets it: PgBouncer refuses `options`).
    ...(pooler === "none" ? { options: searchPathOption(opts.schema) } : {}),
    // Names the service in pg_stat_activity and the server's logs.
    application_name: `aps-${opts.schema}`,
  });
  poolers.set(pool, pooler);
  wirePool(pool, opts);
  // a dry run's queries go to a transaction it rolls back (docs/design/edge.md#dry-run)
  dryRunAware(pool);
  try {
    await createSchema(pool, opts.schema);
    if (pooler === "transaction") await checkSearchPath(pool, opts.schema);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  const unregister = registerPool(opts.schema, pool);
  const close = async () => {
    unregister();
    const closed = allClosed(pool);
    await pool.end();
    await closed;
  };
  return {
    pool,
    schema: opts.schema,
    close,
    migrationUrl: opts.migrationUrl,
    pooler,
    migrations: opts.migrations ?? "apply",
  };
}

/** The startup `options` that put a connection's `search_path` on `schema`. */
export function searchPathOption(schema: string): string {
  return `-c search_path=${schema}`;
}

/**
 * Behind a PgBouncer the schema comes from its database entry (`connect_query`): a pool landing
 * elsewhere would read and write another schema's tables, so it fails the start instead.
 */
async function checkSearchPath(pool: pg.Pool, schema: string): Promise<void> {
  const r = await pool.query<{ s: string | null }>("SELECT current_schema() AS s");
  const got = r.rows[0]?.s ?? null;
  if (got !== schema)
    throw new Error(
      `DATABASE_POOLER=transaction: connections of the ${schema} service land in schema ${got ?? "(none)"}, not ${schema}; ` +
        `give it a PgBouncer database entry with connect_query='SET search_path TO ${schema}' (docs/design/operations.md#connection-budget-and-pgbouncer)`,
    );
}

/** Longest wait of `close()` for the pool's connections to close after `pool.end()`, ms. */
export const CLOSE_WAIT_MS = 2_000;

/**
 * Resolves once each client `pool` holds now has ended — pg-pool emits `remove` when a client's
 * end has completed, while `pool.end()` resolves as the ends begin — or after {@link CLOSE_WAIT_MS}.
 * Call it before `pool.end()`.
 */
function allClosed(pool: pg.Pool): Promise<void> {
  let open = pool.totalCount;
  if (open === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      pool.off("remove", onRemove);
      resolve();
    };
    const onRemove = () => {
      if (--open <= 0) done();
    };
    const timer = setTimeout(done, CLOSE_WAIT_MS);
    timer.unref();
    pool.on("remove", onRemove);
  });
}

function wirePool(pool: pg.Pool, opts: DatabaseOptions): void {
  // An idle client losing its server (PostgreSQL restart) must not crash the process: the pool
  // drops it and the next query opens a new connection.
  pool.on("error", (err) => opts.log.warn({ err: err.message }, "idle database connection lost"));
}

/**
 * The readiness probe of `db` for `startGrpcServer` (docs/design/operations.md#health-and-readiness): `SELECT 1` on the service's
 * pool — the embedded server of the all-in-one is a separate process that can fail too.
 */
export function readinessProbe(db: Database): () => Promise<unknown> {
  return () => db.pool.query("SELECT 1");
}

/**
 * `CREATE SCHEMA IF NOT EXISTS` under a transaction-level advisory lock keyed by the schema name:
 * replicas starting at the same moment would otherwise race in PostgreSQL's catalog (the loser
 * fails with a unique violation on pg_namespace despite IF NOT EXISTS). An existing schema is left
 * alone without the CREATE: a per-service role owns only its schema and has no CREATE on the
 * database, and PostgreSQL checks that privilege before IF NOT EXISTS (docs/design/services.md#caller-policy-and-internal-trust).
 */
async function createSchema(pool: pg.Pool, schema: string): Promise<void> {
  const c = await pool.connect();
  let lost: Error | undefined;
  const onError = (err: Error) => void (lost = err); // see withTransaction
  c.on("error", onError);
  try {
    await c.query("BEGIN");
    await c.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`aps-create-schema:${schema}`]);
    const exists = await c.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
    if (exists.rowCount === 0) await c.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await c.query("COMMIT");
  } catch (err) {
    await c.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    c.removeListener("error", onError);
    c.release(lost);
  }
}

/** A client checked out for one transaction. */
export type Tx = pg.PoolClient;

/** Callbacks to run after the commit of a transaction of `withTransaction` (dropped on rollback). */
const commitHooks = new WeakMap<Tx, Set<() => void>>();

/**
 * Runs `fn` once after `tx` commits, and never if it rolls back; the same `fn` registered twice
 * in one transaction runs once. For signals that must follow the commit, such as waking the outbox
 * relay (EventOutbox, docs/design/events.md#catalogue). `fn` runs synchronously after COMMIT; an exception from it
 * is swallowed (the commit has happened; a hook must not turn it into a failure).
 */
export function afterCommit(tx: Tx, fn: () => void): void {
  let hooks = commitHooks.get(tx);
  if (!hooks) commitHooks.set(tx, (hooks = new Set()));
  hooks.add(fn);
}

/**
 * Runs `fn` on one connection checked out of `pool`, outside any transaction, and returns it:
 * for a read of several statements, which under a saturated pool then waits for a connection
 * once rather than once per statement (docs/design/operations.md#connection-budget-and-pgbouncer).
 * A connection that dies meanwhile is kept from crashing the process and destroyed, never pooled
 * again, as in `withTransaction`. Rethrows what `fn` throws.
 */
export async function withConnection<T>(pool: pg.Pool, fn: (q: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  let broken: Error | undefined;
  const lost = (err: Error) => void (broken = err);
  c.on("error", lost);
  try {
    return await fn(c);
  } catch (err) {
    broken ??= isDatabaseUnavailable(err) ? (err as Error) : undefined;
    throw err;
  } finally {
    c.removeListener("error", lost);
    c.release(broken);
  }
}

/**
 * Runs `fn` inside one transaction (READ COMMITTED) and commits, or rolls back and rethrows.
 * Everything `fn` does must go through `tx` (a pool query inside would run outside the
 * transaction, on another connection).
 */
export async function withTransaction<T>(pool: pg.Pool, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const tx = await pool.connect();
  let broken: Error | undefined;
  // A checked-out client has no pool listener: if its connection dies while `fn` awaits something
  // else (no query running), pg emits 'error' on it, which would crash the process. Keep it: the
  // next query fails, the transaction rolls back, and the client is destroyed below.
  const lost = (err: Error) => void (broken = err);
  tx.on("error", lost);
  try {
    await tx.query("BEGIN");
    const out = await fn(tx);
    await tx.query("COMMIT");
    const hooks = commitHooks.get(tx);
    commitHooks.delete(tx);
    // in a dry run nothing was committed: nothing to signal (docs/design/edge.md#dry-run)
    if (inDryRun()) return out;
    for (const hook of hooks ?? []) {
      try {
        hook();
      } catch {
        // see afterCommit
      }
    }
    return out;
  } catch (err) {
    await tx.query("ROLLBACK").catch(() => undefined);
    // A connection that failed (server restarted, socket reset) is destroyed, never pooled again.
    broken ??= isDatabaseUnavailable(err) ? (err as Error) : undefined;
    throw err;
  } finally {
    commitHooks.delete(tx);
    tx.removeListener("error", lost);
    tx.release(broken);
  }
}
