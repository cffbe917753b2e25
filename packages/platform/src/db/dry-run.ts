import { AsyncLocalStorage } from "node:async_hooks";
import type pg from "pg";

/**
 * Dry runs (docs/design/edge.md#dry-run): a write that runs whole — the same validation, limits,
 * authorization and SQL — and keeps nothing. Inside a dry run every query of a pool made
 * dry-run aware ({@link dryRunAware}) goes to one transaction per pool, opened on first use and
 * rolled back when the dry run ends:
 * - a transaction of the code (`BEGIN` … `COMMIT`/`ROLLBACK` on a client from `pool.connect()`)
 *   becomes a savepoint of it (`SAVEPOINT`, `RELEASE`, `ROLLBACK TO`), and the client's
 *   `release()` does nothing;
 * - a query on the pool itself runs in a savepoint of its own, so a failed one (a unique
 *   violation the code answers 409) leaves the transaction usable, as it would on its own;
 * - `afterCommit` hooks do not run and group commits write alone (database.ts, group-commit.ts):
 *   nothing is woken that would read the dry run's rows from outside it.
 * Nothing is committed, so nothing is published either: events leave through the outbox.
 */

/** The transactions of one dry run, one per pool, and the savepoints alive on each. */
class DryRunState {
  /** False once the dry run has ended: later work started inside it (a timer) uses the pool as usual. */
  open = true;
  private readonly clients = new Map<pg.Pool, Promise<DryRunClient>>();

  /** This dry run's transaction on `pool`, begun on first use. */
  client(pool: pg.Pool, connect: () => Promise<pg.PoolClient>): Promise<DryRunClient> {
    let c = this.clients.get(pool);
    if (!c) {
      c = connect().then(async (raw) => {
        const client = new DryRunClient(raw);
        // a checked-out client has no pool listener: a connection lost while the dry run awaits
        // something else must not crash the process (the next query fails instead)
        raw.on("error", client.lost);
        try {
          await raw.query("BEGIN");
        } catch (err) {
          raw.removeListener("error", client.lost);
          raw.release(err as Error);
          throw err;
        }
        return client;
      });
      this.clients.set(pool, c);
    }
    return c;
  }

  /** Rolls every transaction back and returns its connection (a broken one is destroyed). */
  async end(): Promise<void> {
    this.open = false;
    for (const c of this.clients.values()) {
      const client = await c.catch(() => undefined);
      if (!client) continue;
      await client.raw.query("ROLLBACK").then(
        () => undefined,
        (err: Error) => (client.broken ??= err),
      );
      client.raw.removeListener("error", client.lost);
      client.raw.release(client.broken);
    }
    this.clients.clear();
  }
}

/** The SQL of a `query(...)` call's arguments, trimmed and upper-cased ("" when it has none). */
function statementOf(args: unknown[]): string {
  const text = typeof args[0] === "string" ? args[0] : (args[0] as { text?: unknown } | null)?.text;
  return typeof text === "string" ? text.trim().toUpperCase() : "";
}

/** One dry run's connection on one pool, with its live savepoints (names, oldest first). */
class DryRunClient {
  private readonly live: string[] = [];
  private next = 0;
  /** Why the connection broke, if it did: it is then destroyed rather than returned to the pool. */
  broken: Error | undefined;
  /** The connection's `error` listener while the dry run holds it. */
  readonly lost = (err: Error) => void (this.broken = err);
  constructor(readonly raw: pg.PoolClient) {}

  /** A new savepoint's name, and the statement that makes it. */
  savepoint(kind: "q" | "t"): string {
    const name = `aps_dry_${kind}${this.next++}`;
    this.live.push(name);
    void this.raw.query(`SAVEPOINT ${name}`).catch(() => undefined);
    return name;
  }

  /** Releases `name` (and every later one, as PostgreSQL does); nothing when it is gone already. */
  release(name: string): Promise<unknown> {
    const i = this.live.indexOf(name);
    if (i < 0) return Promise.resolve();
    this.live.splice(i);
    return this.raw.query(`RELEASE SAVEPOINT ${name}`);
  }

  /** Rolls back to `name` and releases it: the transaction is usable again. */
  rollbackTo(name: string): Promise<unknown> {
    const i = this.live.indexOf(name);
    if (i < 0) return Promise.resolve();
    this.live.splice(i);
    return this.raw.query(`ROLLBACK TO SAVEPOINT ${name}`).then(() => this.raw.query(`RELEASE SAVEPOINT ${name}`));
  }

  /**
   * A plain query (promise form: `args` hold no callback) in a savepoint of its own. A
   * transaction statement on the pool itself (which pg would run in a session of its own) does
   * nothing here: it must not end the dry run's transaction.
   */
  query(args: unknown[]): Promise<unknown> {
    const rawQuery = this.raw.query.bind(this.raw) as (...a: unknown[]) => Promise<unknown>;
    if (/^(BEGIN|START TRANSACTION|COMMIT|END|ROLLBACK)\b/.test(statementOf(args)))
      return Promise.resolve({ rows: [], rowCount: null });
    const sp = this.savepoint("q");
    const run = rawQuery(...args);
    return run.then(
      async (r) => {
        await this.release(sp);
        return r;
      },
      async (err: unknown) => {
        await this.rollbackTo(sp).catch(() => undefined);
        throw err;
      },
    );
  }

  /**
   * What `pool.connect()` hands out inside a dry run: this connection, where the code's own
   * transaction statements become savepoint statements and `release()` does nothing.
   */
  asTransactionClient(): pg.PoolClient {
    let current: string | undefined;
    const raw = this.raw;
    const rawQuery = raw.query.bind(raw) as (...a: unknown[]) => Promise<unknown>;
    const query = (...args: unknown[]): unknown => {
      const statement = statementOf(args);
      if (/^(BEGIN|START TRANSACTION)\b/.test(statement)) {
        current = this.savepoint("t");
        return Promise.resolve({ command: "BEGIN", rows: [], rowCount: null });
      }
      if (/^(COMMIT|END)\b/.test(statement)) {
        const sp = current;
        current = undefined;
        return (sp === undefined ? Promise.resolve() : this.release(sp)).then(() => ({
          command: "COMMIT",
          rows: [],
          rowCount: null,
        }));
      }
      if (/^ROLLBACK\s*;?$/.test(statement)) {
        const sp = current;
        current = undefined;
        return (sp === undefined ? Promise.resolve() : this.rollbackTo(sp)).then(() => ({
          command: "ROLLBACK",
          rows: [],
          rowCount: null,
        }));
      }
      // a statement sent as is: never one that would end the dry run's own transaction
      return rawQuery(...args);
    };
    return new Proxy(raw, {
      get(target, prop, receiver) {
        if (prop === "query") return query;
        if (prop === "release") return () => undefined;
        const v: unknown = Reflect.get(target, prop, receiver);
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }
}

const scope = new AsyncLocalStorage<DryRunState>();

/**
 * The gRPC metadata entry (value "1") that makes a call a dry run: the typed clients add it to
 * every call made inside a dry run, and the served handlers (`unary`) run such a call as one.
 */
export const DRY_RUN_METADATA_KEY = "aps-dry-run";

/** True inside a dry run that has not ended (docs/design/edge.md#dry-run). */
export function inDryRun(): boolean {
  return scope.getStore()?.open === true;
}

/**
 * Runs `fn` outside any dry run: for a loop woken by a request (the outbox relay, the webhook
 * worker) that must read and publish only what is committed, whoever woke it.
 */
export function outsideDryRun<T>(fn: () => T): T {
  return scope.exit(fn);
}

/**
 * Runs `fn` as a dry run: every query of a dry-run-aware pool inside it (and in what it calls,
 * in this process) runs in a transaction that is rolled back once `fn` settles. Resolves or
 * rejects as `fn` does. A dry run inside a dry run is one more of its own (its own transactions).
 */
export async function runAsDryRun<T>(fn: () => Promise<T>): Promise<T> {
  const state = new DryRunState();
  try {
    return await scope.run(state, fn);
  } finally {
    await state.end();
  }
}

/** Pools already made dry-run aware. */
const aware = new WeakSet<pg.Pool>();

/**
 * Makes `pool` dry-run aware, in place, and returns it: outside a dry run `query` and `connect`
 * are pg's own; inside one they use the dry run's transaction (see the module doc). openDatabase
 * does this for every service's pool.
 */
export function dryRunAware(pool: pg.Pool): pg.Pool {
  if (aware.has(pool)) return pool;
  aware.add(pool);
  const query = pool.query.bind(pool) as (...a: unknown[]) => unknown;
  const connect = pool.connect.bind(pool) as (...a: unknown[]) => unknown;
  const rawConnect = () => connect() as Promise<pg.PoolClient>;
  (pool as { query: unknown }).query = (...args: unknown[]): unknown => {
    const state = scope.getStore();
    if (!state?.open) return query(...args);
    const cb = args[args.length - 1];
    const promiseArgs = typeof cb === "function" ? args.slice(0, -1) : args;
    const run = state.client(pool, rawConnect).then((c) => c.query(promiseArgs));
    if (typeof cb === "function") {
      run.then(
        (r) => (cb as (e: unknown, r?: unknown) => void)(undefined, r),
        (e) => (cb as (e: unknown) => void)(e),
      );
      return undefined;
    }
    return run;
  };
  (pool as { connect: unknown }).connect = (...args: unknown[]): unknown => {
    const state = scope.getStore();
    if (!state?.open) return connect(...args);
    const got = state.client(pool, rawConnect).then((c) => c.asTransactionClient());
    const cb = args[0];
    if (typeof cb === "function") {
      got.then(
        (c) => (cb as (e: unknown, c?: unknown, done?: () => void) => void)(undefined, c, () => undefined),
        (e) => (cb as (e: unknown) => void)(e),
      );
      return undefined;
    }
    return got;
  };
  return pool;
}
