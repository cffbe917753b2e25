// Where the system's data lives, per mode: a fresh database and a unique NATS stream/subject
// prefix on the servers named by DATABASE_URL/NATS_URL (distributed), or the embedded PostgreSQL
// server whose URL the all-in-one writes to `$APS_DATA_DIR/postgres.url` (embedded).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { onCleanup } from "./cleanup.mjs";

/**
 * Creates database `aps_bench_<suffix>` on the server of `databaseUrl` and picks a unique
 * NATS_STREAM / APS_SUBJECT_PREFIX; both are dropped by the returned `drop` (also registered for
 * cleanup). `env` is what the distributed topology gets; `sqlUrl` reaches the new database.
 * @param {string} databaseUrl a URL of the shared PostgreSQL (its database is only used to create/drop ours)
 * @param {string} natsUrl
 * @throws when the database cannot be created
 */
export async function createDistributedInfra(databaseUrl, natsUrl) {
  const suffix = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
  const name = `aps_bench_${suffix}`;
  const admin = async (sql) => {
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const u = new URL(databaseUrl);
  u.pathname = `/${name}`;
  const stream = `APS_BENCH_${suffix.toUpperCase()}`;
  const drop = onCleanup(`drop database ${name} and stream ${stream}`, async () => {
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    const { connect } = await import("nats");
    const nc = await connect({ servers: natsUrl });
    try {
      await (await nc.jetstreamManager()).streams.delete(stream).catch(() => undefined);
    } finally {
      await nc.close();
    }
  });
  return {
    env: {
      DATABASE_URL: u.toString(),
      NATS_URL: natsUrl,
      NATS_STREAM: stream,
      APS_SUBJECT_PREFIX: `bench${suffix}.aps`,
    },
    sqlUrl: u.toString(),
    database: name,
    drop,
  };
}

/**
 * The connection URL of the embedded PostgreSQL server of a running all-in-one
 * (`$APS_DATA_DIR/postgres.url`), or null when there is none.
 * @param {string} dataDir APS_DATA_DIR
 */
export function embeddedSqlUrl(dataDir) {
  const f = join(dataDir, "postgres.url");
  return existsSync(f) ? readFileSync(f, "utf8").trim() : null;
}
