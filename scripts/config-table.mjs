// npm run config:check — the README's configuration table names every variable a service reads:
// each deployable's env schema (`<name>EnvSchema`, parsed by its `loadConfig(env)` in src/config.ts)
// is read from the built packages, and every key of it must appear in the first column of the
// README's "Configuration" table — by name (`POSTS_PER_DAY`) or by a pattern row (`<NAME>_DATABASE_URL`,
// `*_GRPC_ADDR`). A variable added to a schema without a row fails here, naming the variable and the
// services that read it. `--list` prints every variable with its services instead (one per line);
// `--readme <file>` checks another copy of the README (the test uses one).
// Needs the services built (`npx turbo run build`). Exits 1 on a missing row.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The deployables whose env schemas the README documents, with the export that holds each. */
const SCHEMAS = [
  ["gateway", "@aps/gateway", "gatewayEnvSchema"],
  ["identity", "@aps/identity", "identityEnvSchema"],
  ["forum", "@aps/forum", "forumEnvSchema"],
  ["council", "@aps/council", "councilEnvSchema"],
  ["translation", "@aps/translation", "translationEnvSchema"],
  ["notifications", "@aps/notifications", "notificationsEnvSchema"],
  ["knowledge", "@aps/knowledge", "knowledgeEnvSchema"],
];

/**
 * Every variable of the env schemas: name → the services that read it.
 * @returns {Promise<Map<string, string[]>>}
 */
export async function schemaVariables() {
  /** @type {Map<string, string[]>} */
  const vars = new Map();
  for (const [service, pkg, name] of SCHEMAS) {
    const schema = (await import(pkg))[name];
    if (!schema?.shape) throw new Error(`${pkg} exports no zod object ${name}`);
    for (const key of Object.keys(schema.shape)) vars.set(key, [...(vars.get(key) ?? []), service]);
  }
  return vars;
}

/**
 * The variables the README's "Configuration" table names in its first column: exact names, and
 * patterns (`<NAME>` or `*` stand for any run of capitals, digits and underscores) as RegExps.
 * @param {string} readme @returns {{ names: Set<string>, patterns: RegExp[] }}
 */
export function tableVariables(readme) {
  const from = readme.indexOf("\n## Configuration");
  if (from < 0) throw new Error('README.md has no "## Configuration" section');
  const to = readme.indexOf("\n## ", from + 1);
  const names = new Set();
  const patterns = [];
  for (const line of readme.slice(from, to < 0 ? undefined : to).split("\n")) {
    if (!line.startsWith("| ")) continue;
    const first = line.split("|")[1] ?? "";
    for (const m of first.matchAll(/`([^`]+)`/g)) {
      const v = m[1].trim();
      if (/[<*]/.test(v))
        patterns.push(new RegExp(`^${v.replace(/<[A-Z_]+>|\*/g, "[A-Z0-9_]+").replace(/[^A-Z0-9_[\]+^$-]/g, "")}$`));
      else names.add(v);
    }
  }
  return { names, patterns };
}

async function main() {
  const vars = await schemaVariables();
  if (process.argv.includes("--list")) {
    for (const [v, s] of [...vars].sort()) console.log(`${v}\t${s.join(",")}`);
    return;
  }
  const at = process.argv.indexOf("--readme");
  const readme = at >= 0 ? process.argv[at + 1] : join(ROOT, "README.md");
  const { names, patterns } = tableVariables(readFileSync(readme, "utf8"));
  const missing = [...vars]
    .filter(([v]) => !names.has(v) && !patterns.some((p) => p.test(v)))
    .sort(([a], [b]) => a.localeCompare(b));
  for (const [v, s] of missing)
    console.error(`README.md "Configuration": no row for \`${v}\` (read by ${s.join(", ")})`);
  if (missing.length > 0) process.exit(1);
  console.log(`README.md "Configuration": all ${vars.size} variables of the env schemas have a row`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
