import { randomBytes } from "node:crypto";
import net from "node:net";
import pg from "pg";

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
 * (docs/adr/0146). Long enough that a fetched batch (25 events at this value) is handled well
 * within it on the loaded 2-core CI machine.
 */
export const TEST_NATS_ACK_WAIT_MS = "2500";

/** A random lowercase suffix for names of per-test databases, streams and subjects. */
export function uniqueSuffix(): string {
  return randomBytes(5).toString("hex");
}

/** True when a TCP connection to `url`'s host:port opens within `ms`. */
export async function reachable(url: string, ms = 1_000): Promise<boolean> {
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

let pgChecked: Promise<boolean> | undefined;
/** True when the real PostgreSQL is reachable; throws when absent under APS_TEST_REQUIRE_REAL=1. */
export async function hasPostgres(): Promise<boolean> {
  pgChecked ??= reachable(ADMIN_DATABASE_URL);
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
  natsChecked ??= reachable(TEST_NATS_URL.replace(/^nats:/, "http:"));
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

/** Creates a fresh database `aps_t_<suffix>` on the real PostgreSQL. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `aps_t_${uniqueSuffix()}`;
  const admin = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
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
