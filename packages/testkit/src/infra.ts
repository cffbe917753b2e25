import { randomBytes } from "node:crypto";
import net from "node:net";
import pg from "pg";
import { scaled, waitUntil } from "./wait.js";

/**
 * Finds the real infrastructure the tests should use (trigger.dev-style shared fixture): the
 * PostgreSQL at `TEST_DATABASE_URL` (default postgres://postgres@127.0.0.1:5432/postgres) and the
 * NATS at `TEST_NATS_URL` (default nats://127.0.0.1:4222). When one is absent the tests fall back
 * to the embedded equivalents and say so loudly; with `APS_TEST_REQUIRE_REAL=1` (set by .ci/run)
 * an absent one is an error instead, so CI can never silently test only the embedded path.
 */
export const ADMIN_DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const TEST_NATS_URL = process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222";
const requireReal = process.env.APS_TEST_REQUIRE_REAL === "1";

/**
 * `NATS_ACK_WAIT_MS` of the services the tests run on NATS (the `real`, `distributed` and
 * container modes, the fault topologies): a delivery held by a killed or cut-off process is
 * redelivered, and every durable consumer settles, within seconds instead of JetStream's 30 s
 * (docs/design/events.md#jetstream-stream-and-consumers). Long enough that a fetched batch (25 events at this value) is handled well
 * within it on the loaded 2-core CI machine.
 */
export const TEST_NATS_ACK_WAIT_MS = "2500";

/** A random lowercase suffix for names of per-test databases, streams and subjects. */
export function uniqueSuffix(): string {
  return randomBytes(5).toString("hex");
}

/** True when a TCP connection to `url`'s host:port opens within `ms` (default 2 s, stretched by TEST_TIME_SCALE). */
export async function reachable(url: string, ms = scaled(2_000)): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect({ host: u.hostname, port: Number(u.port) }, () => {
      s.destroy();
      resolve(true);
    });
    s.setTimeout(ms, () => {
      s.destroy();
      resolve(false);
    });
    s.on("error", () => resolve(false));
  });
}

/**
 * Whether a server the tests need is there: one look, and under APS_TEST_REQUIRE_REAL=1 — where it
 * must be — more looks for up to 30 s (stretched by TEST_TIME_SCALE) before the answer is no, so a
 * loaded machine's slow accept is not taken for a missing server.
 */
async function present(url: string): Promise<boolean> {
  if (await reachable(url)) return true;
  if (!requireReal) return false;
  return waitUntil(`a server at ${url}`, () => reachable(url), { timeoutMs: 30_000, intervalMs: 500 }).catch(
    () => false,
  );
}

let pgChecked: Promise<boolean> | undefined;
/** True when the real PostgreSQL is reachable; throws when absent under APS_TEST_REQUIRE_REAL=1. */
export async function hasPostgres(): Promise<boolean> {
  pgChecked ??= present(ADMIN_DATABASE_URL);
  const ok = await pgChecked;
  if (!ok && requireReal) throw new Error(`APS_TEST_REQUIRE_REAL=1 but no PostgreSQL at ${ADMIN_DATABASE_URL}`);
  if (!ok)
    console.warn(
      `[testkit] NO REAL POSTGRESQL at ${ADMIN_DATABASE_URL}: tests that need it are SKIPPED; the embedded all-in-one tests still run`,
    );
  return ok;
}

let natsChecked: Promise<boolean> | undefined;
/** True when the real NATS is reachable; throws when absent under APS_TEST_REQUIRE_REAL=1. */
export async function hasNats(): Promise<boolean> {
  natsChecked ??= present(TEST_NATS_URL.replace(/^nats:/, "http:"));
  const ok = await natsChecked;
  if (!ok && requireReal) throw new Error(`APS_TEST_REQUIRE_REAL=1 but no NATS at ${TEST_NATS_URL}`);
  if (!ok)
    console.warn(
      `[testkit] NO REAL NATS at ${TEST_NATS_URL}: tests that need it are SKIPPED; in-process bus tests still run`,
    );
  return ok;
}

/** A database created for one test file. */
export interface TestDatabase {
  url: string;
  /** Drops the database (terminating leftover connections). */
  drop(): Promise<void>;
}

/**
 * Creates a fresh database `aps_t_<suffix>` on the real PostgreSQL: empty, or a copy of
 * `template` (a database name; `CREATE DATABASE … TEMPLATE`, which fails while another session is
 * connected to the template).
 */
export async function createTestDatabase(template?: string): Promise<TestDatabase> {
  const name = `aps_t_${uniqueSuffix()}`;
  const admin = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  await admin.query(
    template ? `CREATE DATABASE ${name} TEMPLATE ${pg.escapeIdentifier(template)}` : `CREATE DATABASE ${name}`,
  );
  await admin.end();
  const u = new URL(ADMIN_DATABASE_URL);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** Names that isolate one test's events on the shared NATS server. */
export function uniqueBusNames(): { stream: string; prefix: string } {
  const s = uniqueSuffix();
  return { stream: `APS_T_${s}`, prefix: `t${s}.aps` };
}

/** Deletes the JetStream stream `name` on the test NATS (`url`); an absent stream is fine. */
export async function deleteTestStream(name: string, url = TEST_NATS_URL): Promise<void> {
  const { connect } = await import("nats");
  const nc = await connect({ servers: url });
  try {
    await (await nc.jetstreamManager()).streams.delete(name).catch(() => undefined);
  } finally {
    await nc.close();
  }
}

/** Templates of other migration keys kept when a new one is made (see {@link migratedTemplate}). */
export const KEPT_TEMPLATES = 2;

/**
 * A database every migration has run on, to copy for the systems of a test run (a
 * real-mode system then starts on migrated schemas instead of migrating from nothing, ~3 s less
 * per start here). Named `aps_tpl_<key>` (`key`: a hash of every migration file, so a changed
 * migration makes a new template), marked `IS_TEMPLATE`, made once per machine and code version:
 * `migrate(url)` runs every migration on a fresh database, under an advisory lock so concurrent
 * jest processes make it once. When a new one is made, templates of other keys are dropped but the
 * {@link KEPT_TEMPLATES} newest, so checkouts of two code versions testing at once on one server do
 * not drop each other's template mid-run.
 * Resolves the template's name; throws when `migrate` does.
 */
export async function migratedTemplate(key: string, migrate: (url: string) => Promise<void>): Promise<string> {
  const name = `aps_tpl_${key}`;
  const admin = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    const exists = async () =>
      (await admin.query("SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate", [name])).rowCount === 1;
    if (await exists()) return name;
    await admin.query("SELECT pg_advisory_lock(hashtext('aps test template'))");
    try {
      if (await exists()) return name;
      const build = await createTestDatabase();
      try {
        await migrate(build.url);
      } catch (err) {
        await build.drop();
        throw err;
      }
      const built = new URL(build.url).pathname.slice(1);
      await admin.query(`ALTER DATABASE ${pg.escapeIdentifier(built)} RENAME TO ${pg.escapeIdentifier(name)}`);
      await admin.query(`ALTER DATABASE ${pg.escapeIdentifier(name)} IS_TEMPLATE true`);
      // the newest templates of other keys stay (OIDs grow with each database made): a second
      // checkout testing on this server at once — a stress run beside a change — keeps its own
      const stale = await admin.query<{ datname: string }>(
        `SELECT datname FROM pg_database WHERE datname LIKE 'aps\\_tpl\\_%' AND datname <> $1
         ORDER BY oid::bigint DESC OFFSET $2`,
        [name, KEPT_TEMPLATES],
      );
      for (const { datname } of stale.rows) {
        const id = pg.escapeIdentifier(datname);
        await admin.query(`ALTER DATABASE ${id} IS_TEMPLATE false`);
        await admin.query(`DROP DATABASE IF EXISTS ${id} WITH (FORCE)`);
      }
      return name;
    } finally {
      await admin.query("SELECT pg_advisory_unlock(hashtext('aps test template'))");
    }
  } finally {
    await admin.end();
  }
}

/**
 * Runs `sql` once on a new connection to `url` and resolves its rows; the connection is closed
 * whatever happens. Throws PostgreSQL's error (e.g. a syntax error, a refused connection).
 */
export async function queryRows<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(sql)).rows;
  } finally {
    await c.end();
  }
}
