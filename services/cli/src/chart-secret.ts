import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { GATEWAY, SERVICES } from "@aps/platform/topology";
import { generateTrustEnv } from "@aps/platform/trust-env";

/**
 * `aps chart-secret`: a complete Secret for the chart's `secrets.existingSecret` with internal trust
 * on (docs/operations/secrets.md): the admin token; NATS_URL and MEILISEARCH_URL when given; per component its internal token
 * (`APS_INTERNAL_TOKEN_<NAME>`) and the digests of the callers it accepts (`APS_PEER_DIGESTS_<NAME>`);
 * with `--nats-users`, a NATS user and password per component; with `--database host:port/db`, a
 * role `aps_<name>` per schema owner with its URL (`<NAME>_DATABASE_URL`; through `--pooler`, with
 * `<NAME>_DATABASE_MIGRATION_URL` to the server) and, on stderr, the SQL
 * that creates the roles and sets each one's `search_path` to its schema (the rule that works
 * behind any pooler); with `--sandbox`, the sandbox's keys (docs/design/agents.md#sandbox): its NATS user, and a
 * role owning a database of its own (`<database>_sandbox`, `SANDBOX_DATABASE_URL`, always the server
 * itself). Every secret is fresh random (32 bytes, hex); nothing is written to disk.
 */

/** The deployables that own a schema (topology's `database: true`, the chart's too). */
export const SCHEMA_OWNERS: readonly string[] = [GATEWAY, ...SERVICES].filter((d) => d.database).map((d) => d.name);

/** What `chartSecret` returns: the manifest (YAML) and the SQL for the database roles (empty without `database`). */
export interface ChartSecret {
  yaml: string;
  sql: string;
  /** The Secret's keys and values (for tests and for `--json`). */
  data: Record<string, string>;
}

/** Options of `chartSecret`. */
export interface ChartSecretOptions {
  /** The Secret's name (default `aps-secrets`). */
  name?: string;
  /** Its namespace (default `aps`). */
  namespace?: string;
  /** `host:port/database` of the PostgreSQL server; absent = no database keys, no SQL. */
  database?: string;
  /**
   * `host:port` of a pooler in front of it (PgBouncer, CloudNativePG's Pooler, RDS Proxy): the
   * services' `<NAME>_DATABASE_URL` go there, their `<NAME>_DATABASE_MIGRATION_URL` to the server
   * (migrations hold a session lock, docs/operations/secrets.md). Absent: `<NAME>_DATABASE_URL` is the server.
   */
  pooler?: string;
  /** `nats://…` URL(s) of an external NATS, stored as NATS_URL. */
  natsUrl?: string;
  /** `http(s)://…` of an external Meilisearch, stored as MEILISEARCH_URL. */
  meilisearchUrl?: string;
  /** Add NATS_USER_<NAME> / NATS_PASSWORD_<NAME> for an external NATS with a user per component. */
  natsUsers?: boolean;
  /** Prefix of the database roles (default `aps_`; roles are server-wide: another install on the same server takes another). */
  rolePrefix?: string;
  /**
   * The chart's `search.engine`: `postgres` gives knowledge a role, a schema and its URLs too, and
   * the SQL creates pg_trgm in that schema (a trusted extension: the database owner may create it;
   * the knowledge role may not, having no CREATE on the database). Default `meilisearch`.
   */
  searchEngine?: "meilisearch" | "postgres";
  /**
   * The chart's `sandbox.enabled` (docs/design/agents.md#sandbox): with `natsUsers`, NATS_USER_SANDBOX and
   * NATS_PASSWORD_SANDBOX; with `database`, SANDBOX_DATABASE_URL for role `<prefix>sandbox` on
   * `<database>_sandbox`, which the SQL creates (run by a role that may create databases).
   */
  sandbox?: boolean;
}

const hex32 = () => randomBytes(32).toString("hex");
/** A YAML double-quoted scalar (JSON's string syntax is YAML's). */
const q = (s: string) => JSON.stringify(s);

/**
 * Builds the Secret (see the module doc). Throws when `database` is not `host[:port]/database`,
 * `pooler` not `host:port`, or
 * `rolePrefix` is not a lower-case SQL identifier.
 * Pure apart from the random generator.
 */
export function chartSecret(opts: ChartSecretOptions = {}): ChartSecret {
  const components = [GATEWAY.name, ...SERVICES.map((s) => s.name)];
  const trust = generateTrustEnv(components);
  const data: Record<string, string> = { APS_ADMIN_TOKEN: hex32() };
  for (const c of components) {
    const N = c.toUpperCase();
    data[`APS_INTERNAL_TOKEN_${N}`] = trust[c]!.APS_INTERNAL_TOKEN;
    data[`APS_PEER_DIGESTS_${N}`] = trust[c]!.APS_PEER_DIGESTS;
    if (opts.natsUsers) {
      data[`NATS_USER_${N}`] = c;
      data[`NATS_PASSWORD_${N}`] = hex32();
    }
  }
  if (opts.sandbox && opts.natsUsers) {
    data.NATS_USER_SANDBOX = "sandbox";
    data.NATS_PASSWORD_SANDBOX = hex32();
  }
  if (opts.natsUrl) data.NATS_URL = opts.natsUrl;
  if (opts.meilisearchUrl) data.MEILISEARCH_URL = opts.meilisearchUrl;
  const sql: string[] = [];
  if (opts.database !== undefined) {
    const m = /^([^/:\s]+)(?::(\d+))?\/([A-Za-z0-9_-]+)$/.exec(opts.database);
    if (!m) throw new Error(`--database: expected host[:port]/database, got ${opts.database}`);
    const [, host, port = "5432", db] = m as unknown as [string, string, string | undefined, string];
    const prefix = opts.rolePrefix ?? "aps_";
    const pooled = opts.pooler;
    if (pooled !== undefined && !/^[^/:\s]+:\d+$/.test(pooled))
      throw new Error(`--pooler: expected host:port, got ${pooled}`);
    if (!/^[a-z_][a-z0-9_]*$/.test(prefix)) throw new Error(`--role-prefix: expected [a-z_][a-z0-9_]*, got ${prefix}`);
    const owners = opts.searchEngine === "postgres" ? [...SCHEMA_OWNERS, "knowledge"] : SCHEMA_OWNERS;
    for (const owner of owners) {
      const role = `${prefix}${owner}`;
      const password = hex32();
      const direct = `postgresql://${role}:${password}@${host}:${port}/${db}`;
      data[`${owner.toUpperCase()}_DATABASE_URL`] = pooled
        ? `postgresql://${role}:${password}@${pooled}/${db}`
        : direct;
      if (pooled) data[`${owner.toUpperCase()}_DATABASE_MIGRATION_URL`] = direct;
      sql.push(
        `CREATE ROLE ${role} LOGIN PASSWORD '${password}';`,
        `CREATE SCHEMA IF NOT EXISTS ${owner} AUTHORIZATION ${role};`,
        `ALTER ROLE ${role} SET search_path = ${owner};`,
      );
      // the PostgreSQL search engine's trigram index (services/knowledge/src/store/postgres-engine.ts)
      if (owner === "knowledge") sql.push(`CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA ${owner};`);
    }
    sql.unshift(`-- run once as the database owner on ${db} (psql -d ${db}); the roles own their schema only`);
    if (opts.sandbox) {
      // the sandbox's own database, owned by its role; never through the pooler (docs/design/agents.md#sandbox)
      const role = `${prefix}sandbox`;
      const password = hex32();
      data.SANDBOX_DATABASE_URL = `postgresql://${role}:${password}@${host}:${port}/${db}_sandbox`;
      sql.push(
        `-- the sandbox: as a role that may create databases`,
        `CREATE ROLE ${role} LOGIN PASSWORD '${password}';`,
        `CREATE DATABASE "${db}_sandbox" OWNER ${role};`,
      );
    }
  }
  const yaml = [
    "apiVersion: v1",
    "kind: Secret",
    "metadata:",
    `  name: ${q(opts.name ?? "aps-secrets")}`,
    `  namespace: ${q(opts.namespace ?? "aps")}`,
    "type: Opaque",
    "stringData:",
    ...Object.entries(data).map(([k, v]) => `  ${k}: ${q(v)}`),
    "",
  ].join("\n");
  return { yaml, sql: sql.length > 0 ? `${sql.join("\n")}\n` : "", data };
}

/**
 * `aps chart-secret [--name N] [--namespace NS] [--database host:port/db] [--pooler host:port] [--role-prefix P]
 * [--nats-url URL] [--nats-users] [--meilisearch-url URL] [--search-engine meilisearch|postgres] [--sandbox]`: YAML on stdout,
 * SQL on stderr. Throws on an unknown option or search engine.
 */
export function chartSecretCommand(args: string[]): void {
  const { values } = parseArgs({
    args,
    options: {
      name: { type: "string" },
      namespace: { type: "string" },
      database: { type: "string" },
      pooler: { type: "string" },
      "nats-url": { type: "string" },
      "meilisearch-url": { type: "string" },
      "nats-users": { type: "boolean" },
      "role-prefix": { type: "string" },
      "search-engine": { type: "string" },
      sandbox: { type: "boolean" },
    },
    strict: true,
  });
  const engine = values["search-engine"];
  if (engine !== undefined && engine !== "meilisearch" && engine !== "postgres")
    throw new Error(`--search-engine: expected meilisearch or postgres, got ${engine}`);
  const out = chartSecret({
    ...(engine !== undefined ? { searchEngine: engine } : {}),
    ...(values.name !== undefined ? { name: values.name } : {}),
    ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
    ...(values.database !== undefined ? { database: values.database } : {}),
    ...(values.pooler !== undefined ? { pooler: values.pooler } : {}),
    ...(values["nats-url"] !== undefined ? { natsUrl: values["nats-url"] } : {}),
    ...(values["meilisearch-url"] !== undefined ? { meilisearchUrl: values["meilisearch-url"] } : {}),
    natsUsers: values["nats-users"] === true,
    sandbox: values.sandbox === true,
    ...(values["role-prefix"] !== undefined ? { rolePrefix: values["role-prefix"] } : {}),
  });
  process.stdout.write(out.yaml);
  if (out.sql) process.stderr.write(out.sql);
}
