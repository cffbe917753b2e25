/**
 * jest `globalSetup`: runs once in jest's own process before any test file (the suite runs in
 * band, jest.config.js `maxWorkers: 1`, so what it puts in `process.env` reaches every test and
 * every process a test spawns). Two things, each made once per run: the gateway's OpenAPI
 * document for the contract check (below) and the embedded PostgreSQL's template cluster.
 *
 * The embedded PostgreSQL's template cluster (docs/design/tests.md#template-databases): a fresh, empty folder
 * `<tmpdir>/aps-pg-template-<pid>-XXXXXX` named in `APS_TEST_PG_TEMPLATE`. test/support/system.ts
 * passes it as `APS_EMBEDDED_PG_TEMPLATE` to the embedded systems it starts on fresh data folders;
 * the first of them fills it by a real initdb (under a lock file), the others copy it, so the run
 * pays for one initdb instead of one per system. The folder is removed when jest's process exits;
 * folders of runs whose process is gone (killed before its exit handlers ran) are removed here.
 * An `APS_TEST_PG_TEMPLATE` already set is kept as it is (a template reused across runs, at the
 * caller's risk of a stale one). Returns nothing; throws only when the folder cannot be made.
 */
const { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } = require("node:fs");
const { tmpdir } = require("node:os");
const { join } = require("node:path");

const PREFIX = "aps-pg-template-";

/** Whether a process with this pid runs (EPERM: it does, as another user). */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
}

/**
 * The gateway's OpenAPI document, built once from the built gateway (`services/gateway/dist`) and
 * written to `<dir>/openapi.json`, named in `APS_TEST_OPENAPI_FILE` for test/support/contract.setup.ts
 * (once per run instead of once per test file). Nothing when the gateway is not built
 * (a run from sources, APS_TEST_FROM_SOURCE=1): the setup then builds it from the sources itself.
 */
async function writeOpenApi(dir) {
  if (process.env.APS_TEST_FROM_SOURCE === "1") return;
  const gateway = join(__dirname, "../../services/gateway/dist");
  if (!existsSync(join(gateway, "openapi/document.js"))) return;
  const { buildOpenApi } = await import(join(gateway, "openapi/document.js"));
  const { loadSkill } = await import(join(gateway, "skill.js"));
  const file = join(dir, "openapi.json");
  writeFileSync(file, JSON.stringify(buildOpenApi(loadSkill().version).document));
  process.env.APS_TEST_OPENAPI_FILE = file;
}

module.exports = async function globalSetup() {
  const docDir = mkdtempSync(join(tmpdir(), "aps-openapi-"));
  process.on("exit", () => rmSync(docDir, { recursive: true, force: true }));
  await writeOpenApi(docDir);
  if (process.env.APS_TEST_PG_TEMPLATE) return;
  for (const name of readdirSync(tmpdir())) {
    const pid = Number(name.startsWith(PREFIX) ? name.slice(PREFIX.length).split("-")[0] : NaN);
    if (pid > 0 && !alive(pid)) rmSync(join(tmpdir(), name), { recursive: true, force: true });
  }
  const dir = mkdtempSync(join(tmpdir(), `${PREFIX}${process.pid}-`));
  process.env.APS_TEST_PG_TEMPLATE = dir;
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
};
