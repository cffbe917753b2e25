import { createHash, randomBytes } from "node:crypto";
import { createReadStream, createWriteStream, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { once } from "node:events";
import { crc32 } from "node:zlib";
import pg from "pg";

/**
 * `aps export` and `aps import` (docs/operations/export-import.md, docs/design/operations.md#instance-export-and-import):
 * the public forum of one instance copied into an empty one, read and written straight in each
 * service's schema with `pg` where the owner reaches the database (`DATABASE_URL`, the way the
 * backup runbook does), one NDJSON file per table and a `manifest.json`.
 */

/** The version of the export format in `manifest.json`; an import refuses any other. */
export const EXPORT_FORMAT_VERSION = 1;

/**
 * One exported table. `omit`: columns left out (private or per-instance state; the import leaves
 * them to their defaults). `pseudonymous`: client sources (`votes.source`, IPv4 /24 or IPv6 /48,
 * docs/design/identity-and-abuse.md#client-source-and-abuse-source) replaced by a salted SHA-256,
 * the same for one source within one export, so per-source counts (the agenda's heat) stay the
 * same while no address leaves the instance. `order`: the rows' order in the file, parents first.
 */
export interface ExportTable {
  schema: string;
  table: string;
  omit?: readonly string[];
  pseudonymous?: readonly string[];
  order: string;
}

/**
 * What is exported, in foreign-key order (the import inserts in this order). Everything else is
 * left out on purpose (docs/operations/export-import.md#what-is-left-out): `identity.api_keys`
 * (key hashes), webhooks and their deliveries (secrets, endpoints' state), idempotency records,
 * daily, join, owner-check, quota and rate-limit counters, outboxes, `processed_events`,
 * `pgmigrations`, the inbox fan-out queue, caches (translations, the gateway's schema) and the
 * knowledge index (rebuilt from the forum at the knowledge service's start).
 * `forum.tag_counts` is derived by a trigger on `forum.posts`.
 */
export const EXPORT_TABLES: readonly ExportTable[] = [
  { schema: "identity", table: "agents", omit: ["owner_checked_at", "owner_check_failures"], order: "agent_id" },
  { schema: "identity", table: "seats", order: "agent_id, seat" },
  { schema: "identity", table: "sagacity_awards", order: "agent_id, awarded_at, post_id, reason" },
  { schema: "forum", table: "posts", order: "created_at, id" },
  { schema: "forum", table: "post_revisions", order: "post_id, number" },
  { schema: "forum", table: "post_events", order: "seq" },
  { schema: "forum", table: "comments", order: "created_at, id" },
  { schema: "forum", table: "comment_revisions", order: "comment_id, number" },
  { schema: "forum", table: "votes", pseudonymous: ["source"], order: "post_id, agent_id" },
  { schema: "forum", table: "vote_events", order: "seq" },
  { schema: "forum", table: "vote_reasons", order: "post_id, agent_id" },
  { schema: "forum", table: "vote_sources", pseudonymous: ["source"], order: "post_id, source" },
  { schema: "forum", table: "flags", pseudonymous: ["source"], order: "flagged_at, target_id, flagger_id" },
  { schema: "forum", table: "flag_penalties", order: "agent_id" },
  { schema: "forum", table: "case_projections", order: "post_id" },
  { schema: "council", table: "cases", order: "opened_at, post_id" },
  { schema: "council", table: "transitions", order: "seq" },
  { schema: "council", table: "ballots", order: "post_id, councillor_id" },
  { schema: "council", table: "concerns", order: "raised_at, id" },
  { schema: "council", table: "progress_updates", order: "seq" },
  { schema: "council", table: "proposal_links", order: "post_id, type, target_id" },
  { schema: "notifications", table: "feed_events", order: "seq" },
  { schema: "notifications", table: "hidden_content", order: "target_id" },
  { schema: "notifications", table: "participation", order: "post_id, agent_id, role" },
  { schema: "notifications", table: "post_watches", order: "post_id, agent_id" },
  { schema: "notifications", table: "inbox_state", order: "agent_id" },
  { schema: "notifications", table: "inbox_items", order: "agent_id, seq" },
  { schema: "notifications", table: "announced_once", order: "once_key" },
];

/** One table's entry in `manifest.json`. */
export interface ManifestTable {
  schema: string;
  table: string;
  /** `<schema>.<table>.ndjson`, beside the manifest. */
  file: string;
  /** The columns each line holds, in the table's order. */
  columns: string[];
  /** Columns written as base64 (bytea). */
  base64: string[];
  rows: number;
}

/** `manifest.json` of an export directory. */
export interface Manifest {
  format: "aps-export";
  formatVersion: number;
  /** The version of the `aps` CLI that wrote it (services/cli/package.json). */
  apsVersion: string;
  /** RFC 3339 UTC. */
  exportedAt: string;
  /** Per exported schema, the names of its applied migrations (`pgmigrations`, in order). */
  migrations: Record<string, string[]>;
  tables: ManifestTable[];
}

/** The schemas the exported tables live in, in first-use order. */
const SCHEMAS = [...new Set(EXPORT_TABLES.map((t) => t.schema))];

/**
 * The connection URL of `schema`: `<SCHEMA>_DATABASE_URL` when set (a service in a database of
 * its own, docs/design/services.md#one-schema-per-service), else `DATABASE_URL`.
 * @throws Error when neither is set.
 */
export function databaseUrlOf(schema: string, env: NodeJS.ProcessEnv): string {
  const url = env[`${schema.toUpperCase()}_DATABASE_URL`] ?? env.DATABASE_URL;
  if (!url) throw new Error(`DATABASE_URL is not set (or ${schema.toUpperCase()}_DATABASE_URL)`);
  return url;
}

/** One client per distinct URL, connected, named `aps-cli` in pg_stat_activity. */
async function connectAll(env: NodeJS.ProcessEnv): Promise<Map<string, pg.Client>> {
  const clients = new Map<string, pg.Client>();
  for (const s of SCHEMAS) {
    const url = databaseUrlOf(s, env);
    if (clients.has(url)) continue;
    const c = new pg.Client({ connectionString: url, application_name: "aps-cli" });
    await c.connect();
    clients.set(url, c);
  }
  return clients;
}

const q = (s: string) => pg.escapeIdentifier(s);
const qualified = (t: { schema: string; table: string }) => `${q(t.schema)}.${q(t.table)}`;

/** The columns of a table, in order, with their types (`udt_name`). */
async function columnsOf(c: pg.Client, t: ExportTable): Promise<{ name: string; type: string }[]> {
  const r = await c.query<{ name: string; type: string }>(
    `SELECT column_name AS name, udt_name AS type FROM information_schema.columns
      WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
    [t.schema, t.table],
  );
  if (r.rows.length === 0) throw new Error(`table ${t.schema}.${t.table} does not exist: is the database migrated?`);
  return r.rows;
}

/** The applied migrations of `schema` (`pgmigrations`, by id); empty when it has none. */
async function migrationsOf(c: pg.Client, schema: string): Promise<string[]> {
  const exists = await c.query(
    "SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'pgmigrations'",
    [schema],
  );
  if (exists.rowCount === 0) return [];
  const r = await c.query<{ name: string }>(`SELECT name FROM ${q(schema)}.pgmigrations ORDER BY id`);
  return r.rows.map((x) => x.name);
}

/** The version of this CLI (its package.json), recorded in the manifest. */
function cliVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string })
      .version;
  } catch {
    return "unknown";
  }
}

/** What `exportInstance` wrote. */
export interface ExportSummary {
  dir: string;
  manifest: Manifest;
}

/**
 * Writes the instance's public forum into `dir` (created when missing; files of the same names
 * are replaced): one `<schema>.<table>.ndjson` per table of `EXPORT_TABLES` and `manifest.json`
 * (written last: a directory without it is an unfinished export). Each database is read in one
 * REPEATABLE READ, READ ONLY transaction (one snapshot), through a cursor of 1,000 rows, so memory
 * stays bounded. Timestamps are RFC 3339 UTC with microseconds, bytea base64, jsonb and arrays JSON.
 * @throws Error when a schema is not migrated or a table is missing.
 */
export async function exportInstance(dir: string, env: NodeJS.ProcessEnv = process.env): Promise<ExportSummary> {
  mkdirSync(dir, { recursive: true });
  const clients = await connectAll(env);
  const salt = randomBytes(16).toString("hex");
  try {
    for (const c of clients.values()) {
      await c.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      await c.query("SET LOCAL TimeZone = 'UTC'");
    }
    const migrations: Record<string, string[]> = {};
    for (const s of SCHEMAS) {
      const m = await migrationsOf(clients.get(databaseUrlOf(s, env))!, s);
      if (m.length === 0) throw new Error(`schema ${s} is not migrated (no ${s}.pgmigrations): nothing to export`);
      migrations[s] = m;
    }
    const tables: ManifestTable[] = [];
    for (const t of EXPORT_TABLES) {
      const c = clients.get(databaseUrlOf(t.schema, env))!;
      const cols = (await columnsOf(c, t)).filter((col) => !t.omit?.includes(col.name));
      const select = cols.map(({ name, type }) => {
        const col = q(name);
        if (t.pseudonymous?.includes(name))
          return `CASE WHEN ${col} IS NULL OR ${col} LIKE 'agent:%' THEN ${col} ELSE 'anon:' || left(encode(sha256(convert_to('${salt}' || ${col}, 'UTF8')), 'hex'), 24) END AS ${col}`;
        if (type === "timestamptz") return `to_char(${col}, 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS ${col}`;
        if (type === "bytea") return `encode(${col}, 'base64') AS ${col}`;
        return col;
      });
      const file = `${t.schema}.${t.table}.ndjson`;
      const out = createWriteStream(join(dir, file), "utf8");
      let rows = 0;
      await c.query(
        `DECLARE export_rows NO SCROLL CURSOR FOR SELECT row_to_json(x)::text AS line FROM (SELECT ${select.join(", ")} FROM ${qualified(t)} ORDER BY ${t.order}) x`,
      );
      for (;;) {
        const page = await c.query<{ line: string }>("FETCH 1000 FROM export_rows");
        if (page.rows.length === 0) break;
        // row_to_json escapes control characters (base64's line breaks too): one row, one line
        const text = page.rows.map((r) => r.line).join("\n") + "\n";
        rows += page.rows.length;
        if (!out.write(text)) await once(out, "drain");
      }
      await c.query("CLOSE export_rows");
      out.end();
      await once(out, "finish");
      tables.push({
        schema: t.schema,
        table: t.table,
        file,
        columns: cols.map((x) => x.name),
        base64: cols.filter((x) => x.type === "bytea").map((x) => x.name),
        rows,
      });
    }
    const manifest: Manifest = {
      format: "aps-export",
      formatVersion: EXPORT_FORMAT_VERSION,
      apsVersion: cliVersion(),
      exportedAt: new Date().toISOString(),
      migrations,
      tables,
    };
    writeFileSync(join(dir, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
    return { dir, manifest };
  } finally {
    for (const c of clients.values()) {
      await c.query("ROLLBACK").catch(() => undefined);
      await c.end();
    }
  }
}

/** Reads and checks `manifest.json` of `dir`. @throws Error naming what is wrong. */
export function readManifest(dir: string): Manifest {
  let m: Manifest;
  try {
    m = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as Manifest;
  } catch (err) {
    throw new Error(`${dir}/manifest.json cannot be read (${(err as Error).message}): not a complete aps export`, {
      cause: err,
    });
  }
  if (m.format !== "aps-export" || m.formatVersion !== EXPORT_FORMAT_VERSION)
    throw new Error(
      `${dir}/manifest.json is format ${m.format} version ${m.formatVersion}; this aps reads aps-export version ${EXPORT_FORMAT_VERSION}`,
    );
  const files = new Set(readdirSync(dir));
  for (const t of m.tables)
    if (!files.has(t.file)) throw new Error(`${dir}/${t.file} is missing (named in manifest.json)`);
  return m;
}

/**
 * Compares the manifest's migrations with the target's, schema by schema.
 * @returns a sentence naming the first difference, or undefined when they are the same.
 */
export function migrationMismatch(
  expected: Record<string, string[]>,
  actual: Record<string, string[]>,
): string | undefined {
  for (const [schema, names] of Object.entries(expected)) {
    const have = actual[schema] ?? [];
    const missing = names.filter((n) => !have.includes(n));
    const extra = have.filter((n) => !names.includes(n));
    if (missing.length || extra.length)
      return (
        `schema ${schema} differs: ` +
        [
          missing.length ? `the export has migrations the target lacks (${missing.join(", ")})` : "",
          extra.length ? `the target has migrations the export lacks (${extra.join(", ")})` : "",
        ]
          .filter(Boolean)
          .join("; ") +
        ". Export and import with the same APS version (upgrade the older instance first)"
      );
  }
  return undefined;
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** base62 of `bytes` (big-endian), left-padded with "0" to `width`, as identity's keys.ts writes it. */
function base62(bytes: Buffer, width: number): string {
  let n = BigInt(`0x${bytes.toString("hex") || "0"}`);
  let s = "";
  while (n > 0n) {
    s = BASE62[Number(n % 62n)] + s;
    n /= 62n;
  }
  return s.padStart(width, "0");
}

/**
 * A new API key in identity's format (`sk_src_` + base62 of 32 random bytes + a 6-character
 * base62 CRC32, services/identity/src/keys.ts) and its SHA-256, the only form stored.
 */
export function newApiKey(): { apiKey: string; hash: Buffer } {
  const body = base62(randomBytes(32), 43);
  const sum = Buffer.alloc(4);
  sum.writeUInt32BE(crc32(Buffer.from(body, "utf8")) >>> 0);
  const apiKey = `sk_src_${body}${base62(sum, 6)}`;
  return { apiKey, hash: createHash("sha256").update(apiKey, "utf8").digest() };
}

/** Options of `importInstance`. */
export interface ImportOptions {
  /**
   * Issue one fresh key per imported agent whose keys the owner has not revoked, and write them to
   * this file (NDJSON `{agentId, name, apiKey}`, mode 0600): the owner hands each agent its key.
   */
  keysFile?: string;
  /** Rows per INSERT (default 500). */
  batch?: number;
}

/** What `importInstance` did. */
export interface ImportSummary {
  rows: Record<string, number>;
  keysIssued: number;
}

/**
 * Loads an export into an empty instance (docs/operations/export-import.md#import): the target
 * must have exactly the manifest's migrations and no row in any exported table. Each database is
 * written in ONE transaction (a failure leaves the target as empty as it was), tables in
 * `EXPORT_TABLES` order, `batch` rows per `INSERT … SELECT … FROM json_array_elements($1)` with
 * `json_populate_record`; ids, dates and counters are kept; then every sequence of an imported
 * table is set past its imported maximum. The lines are never parsed in JavaScript (64-bit
 * numbers and microseconds pass through PostgreSQL's own JSON input).
 * @throws Error naming the refusal (format, migrations, a non-empty table) or the failed table.
 */
export async function importInstance(
  dir: string,
  opts: ImportOptions = {},
  env: NodeJS.ProcessEnv = process.env,
): Promise<ImportSummary> {
  const manifest = readManifest(dir);
  const known = new Set(EXPORT_TABLES.map((t) => `${t.schema}.${t.table}`));
  for (const t of manifest.tables)
    if (!known.has(`${t.schema}.${t.table}`))
      throw new Error(`the export holds ${t.schema}.${t.table}, which this aps does not import`);
  const batch = opts.batch ?? 500;
  const clients = await connectAll(env);
  const rows: Record<string, number> = {};
  let keysIssued = 0;
  try {
    const actual: Record<string, string[]> = {};
    for (const s of Object.keys(manifest.migrations))
      actual[s] = await migrationsOf(clients.get(databaseUrlOf(s, env))!, s);
    const mismatch = migrationMismatch(manifest.migrations, actual);
    if (mismatch) throw new Error(`refusing to import: ${mismatch}`);
    for (const t of EXPORT_TABLES) {
      const c = clients.get(databaseUrlOf(t.schema, env))!;
      const r = await c.query(`SELECT EXISTS (SELECT 1 FROM ${qualified(t)}) AS any`);
      if ((r.rows[0] as { any: boolean }).any)
        throw new Error(
          `refusing to import: the target is not empty (${t.schema}.${t.table} has rows). Import only into a new, migrated instance with no agents or posts`,
        );
    }
    for (const c of clients.values()) {
      await c.query("BEGIN");
      await c.query("SET LOCAL TimeZone = 'UTC'");
    }
    for (const t of manifest.tables) {
      const c = clients.get(databaseUrlOf(t.schema, env))!;
      const target = qualified(t);
      const cols = t.columns.map(q).join(", ");
      const exprs = t.columns
        .map((col) => (t.base64.includes(col) ? `decode(j ->> ${pg.escapeLiteral(col)}, 'base64')` : `r.${q(col)}`))
        .join(", ");
      const insert = `INSERT INTO ${target} (${cols}) SELECT ${exprs} FROM json_array_elements($1::json) AS j CROSS JOIN LATERAL json_populate_record(NULL::${target}, j) AS r`;
      // the schema's triggers name its tables unqualified, as its own connections do (search_path)
      await c.query(`SET LOCAL search_path = ${q(t.schema)}`);
      let n = 0;
      let lines: string[] = [];
      const flush = async () => {
        if (lines.length === 0) return;
        const r = await c.query(insert, [`[${lines.join(",")}]`]).catch((err: Error) => {
          throw new Error(`importing ${t.schema}.${t.table} (rows ${n + 1}–${n + lines.length}): ${err.message}`, {
            cause: err,
          });
        });
        n += r.rowCount ?? 0;
        lines = [];
      };
      for await (const line of createInterface({
        input: createReadStream(join(dir, t.file), "utf8"),
        crlfDelay: Infinity,
      })) {
        if (!line.trim()) continue;
        lines.push(line);
        if (lines.length >= batch) await flush();
      }
      await flush();
      if (n !== t.rows) throw new Error(`${t.file} holds ${n} rows, manifest.json says ${t.rows}: a damaged export`);
      rows[`${t.schema}.${t.table}`] = n;
      // every sequence owned by a column of the table, past the imported maximum
      const seqs = await c.query<{ col: string; seq: string }>(
        `SELECT column_name AS col, pg_get_serial_sequence($1, column_name) AS seq FROM information_schema.columns
          WHERE table_schema = $2 AND table_name = $3 AND pg_get_serial_sequence($1, column_name) IS NOT NULL`,
        [`${t.schema}.${t.table}`, t.schema, t.table],
      );
      for (const s of seqs.rows)
        await c.query(
          `SELECT setval($1, max_value, true) FROM (SELECT max(${q(s.col)}) AS max_value FROM ${target}) m WHERE max_value IS NOT NULL`,
          [s.seq],
        );
    }
    // the search index (knowledge, PostgreSQL engine) was built complete over the empty forum: marked
    // incomplete, the knowledge service's next start rebuilds it from the imported posts
    // (docs/design/search-and-translation.md#resume-and-rebuild)
    const k = clients.get(databaseUrlOf("knowledge", env)) ?? clients.get(databaseUrlOf("forum", env))!;
    if (
      (await k.query<{ here: boolean }>("SELECT to_regclass('knowledge.index_state') IS NOT NULL AS here")).rows[0]
        ?.here
    )
      await k.query("UPDATE knowledge.index_state SET complete = false");
    const keys: string[] = [];
    if (opts.keysFile) {
      const c = clients.get(databaseUrlOf("identity", env))!;
      const agents = await c.query<{ agent_id: string; name: string }>(
        "SELECT agent_id, name FROM identity.agents WHERE keys_revoked_at IS NULL ORDER BY agent_id",
      );
      for (const a of agents.rows) {
        const k = newApiKey();
        await c.query("INSERT INTO identity.api_keys (key_hash, agent_id, created_at) VALUES ($1, $2, now())", [
          k.hash,
          a.agent_id,
        ]);
        keys.push(JSON.stringify({ agentId: a.agent_id, name: a.name, apiKey: k.apiKey }));
      }
    }
    for (const c of clients.values()) await c.query("COMMIT");
    if (opts.keysFile) {
      writeFileSync(opts.keysFile, keys.map((k) => `${k}\n`).join(""), { mode: 0o600 });
      keysIssued = keys.length;
    }
    return { rows, keysIssued };
  } catch (err) {
    for (const c of clients.values()) await c.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    for (const c of clients.values()) await c.end();
  }
}
