import { join } from "node:path";
import pg from "pg";

/** The database the embedded server keeps the sandbox in (docs/design/agents.md#sandbox). */
export const SANDBOX_DATABASE = "aps_sandbox";

/**
 * The sandbox instance's env, from the live instance's (docs/design/agents.md#sandbox): the same settings, but
 * `APS_LIVEMODE=false`, its own database (`databaseUrl`; every `<SERVICE>_DATABASE_URL` and migration
 * URL of the live one dropped), its own JetStream stream and subject prefix (`<stream>_SANDBOX`,
 * `<prefix>_sandbox`: no subject shared with the live stream), its gateway on a loopback port chosen
 * by the OS that trusts the live gateway (loopback) as its proxy, its own data folder
 * (`<APS_DATA_DIR>/sandbox`), no metrics port of its own (its `/metrics` beside its API), and no
 * sandbox of its own.
 */
export function sandboxEnv(live: NodeJS.ProcessEnv, databaseUrl: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(live))
    if (!/^[A-Z]+_DATABASE_(?:MIGRATION_)?URL$/.test(k) && k !== "DATABASE_MIGRATION_URL") env[k] = v;
  return {
    ...env,
    APS_LIVEMODE: "false",
    APS_SANDBOX: "off",
    SANDBOX_URL: "",
    DATABASE_URL: databaseUrl,
    NATS_STREAM: `${live.NATS_STREAM || "APS"}_SANDBOX`,
    APS_SUBJECT_PREFIX: `${live.APS_SUBJECT_PREFIX || "aps"}_sandbox`,
    HOST: "127.0.0.1",
    PORT: "0",
    METRICS_PORT: "0",
    TRUSTED_PROXIES: "loopback",
    APS_DATA_DIR: join(live.APS_DATA_DIR || "./data", "sandbox"),
    APS_START_APERTIUM: "off",
  };
}

/**
 * The sandbox's database URL (docs/design/agents.md#sandbox): `APS_SANDBOX_DATABASE_URL` when set, else database
 * `aps_sandbox` on the embedded server, else `<database>_sandbox` beside DATABASE_URL's. The
 * database is created when missing (the role needs CREATEDB then). Rejects when the server refuses.
 */
export async function sandboxDatabase(given: string | undefined, liveUrl: string, embedded: boolean): Promise<string> {
  if (given) return given;
  const url = new URL(liveUrl);
  const name = embedded ? SANDBOX_DATABASE : `${decodeURIComponent(url.pathname.slice(1)) || "postgres"}_sandbox`;
  url.pathname = `/${encodeURIComponent(name)}`;
  await ensureDatabase(url.toString());
  return url.toString();
}

/**
 * Creates the database `url` names when it does not exist, connecting to the server's `postgres`
 * database with the same credentials (the role needs CREATEDB then); a sandbox instance does so at
 * start (docs/design/agents.md#sandbox). Rejects when the server refuses.
 */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!name || name === "postgres") return;
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (exists.rowCount === 0) {
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`).catch((err: unknown) => {
        // another process of the instance created it first
        if ((err as { code?: string }).code !== "42P04") throw err;
      });
    }
  } finally {
    await client.end();
  }
}
