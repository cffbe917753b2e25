#!/usr/bin/env node
// Lists every test of the suite by name and run mode, without running any (docs/design/tests.md#test-tiers):
//   node scripts/test-names.mjs list [jest paths…] > names.json    every test's full name, per file
//   node scripts/test-names.mjs compare before.json after.json     per file: the modes before → after,
//       the distinct test cases (a name with its run mode taken out) that disappeared, those that
//       moved to another file (not lost: e.g. the container modes of api and notifications now in
//       test/e2e/image.test.ts, docs/design/tests.md#container-systems), and the totals; exits 1 when a distinct test case
//       disappeared from every file.
// The listing is a jest run whose name filter matches nothing: every file is loaded and its
// `describe` blocks collected (so `describe.each(modes)` expands as on this machine: set
// APS_TEST_REQUIRE_REAL=1 APS_TEST_IMAGE=aps:dev as CI does), while no hook or test body runs.
// Workspace packages resolve to their sources (APS_TEST_FROM_SOURCE=1), so nothing is built.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

/** The run modes of test/support/system.ts, longest first so `distributed-containers` wins over `distributed`. */
export const MODES = ["distributed-containers", "aio-container", "aio-process", "distributed", "embedded", "real"];
const MODE_IN_NAME = new RegExp(`\\((${MODES.join("|")})([,;)])`);

/**
 * A test's full name with its run mode taken out, and the mode (`-` when the name has none).
 * @param {string} name e.g. "agent API end to end (embedded) serves the interface…"
 * @returns {{ test: string, mode: string }}
 */
export function splitMode(name) {
  const m = MODE_IN_NAME.exec(name);
  return m ? { test: name.replace(MODE_IN_NAME, "(<mode>$2"), mode: m[1] } : { test: name, mode: "-" };
}

function list(paths) {
  const dir = mkdtempSync(join(tmpdir(), "aps-test-names-"));
  const out = join(dir, "out.json");
  const r = spawnSync(
    process.execPath,
    [
      "--experimental-vm-modules",
      "--no-warnings=ExperimentalWarning",
      join(root, "node_modules/jest/bin/jest.js"),
      // the paths first: an array option (`--reporters`) would take the paths after it as its values
      ...paths,
      "--testNamePattern",
      "^\\u0000 list only: matches no test$",
      "--json",
      `--outputFile=${out}`,
      "--reporters=default",
    ],
    { cwd: root, stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, APS_TEST_FROM_SOURCE: "1" } },
  );
  let report;
  try {
    report = JSON.parse(readFileSync(out, "utf8"));
  } catch {
    console.error(`jest wrote no report (exit ${r.status})`);
    process.exit(1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const byFile = {};
  for (const f of report.testResults) {
    if (f.testExecError || (f.message && f.assertionResults.length === 0))
      console.error(`could not collect ${relative(root, f.name)}: ${f.message.split("\n")[0]}`);
    byFile[relative(root, f.name)] = f.assertionResults.map((a) => a.fullName).sort();
  }
  process.stdout.write(JSON.stringify(byFile, null, 1) + "\n");
}

function modesOf(names) {
  return [...new Set(names.map((n) => splitMode(n).mode))].sort();
}

function compare(beforePath, afterPath) {
  const before = JSON.parse(readFileSync(beforePath, "utf8"));
  const after = JSON.parse(readFileSync(afterPath, "utf8"));
  const files = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  let lost = 0;
  const count = (o) => Object.values(o).reduce((n, names) => n + names.length, 0);
  const distinct = (o) =>
    new Set(Object.entries(o).flatMap(([f, names]) => names.map((n) => `${f}\t${splitMode(n).test}`)));
  const distinctAfter = distinct(after);
  /** The files after that hold the distinct test case `t`. */
  const filesAfter = (t) => Object.keys(after).filter((f) => distinctAfter.has(`${f}\t${t}`));
  console.log("file\tmodes before → after\ttests before → after");
  for (const f of files) {
    const b = before[f] ?? [];
    const a = after[f] ?? [];
    const mb = modesOf(b).join(",");
    const ma = modesOf(a).join(",");
    if (mb !== ma || b.length !== a.length)
      console.log(`${f}\t${mb || "(none)"} → ${ma || "(none)"}\t${b.length} → ${a.length}`);
    for (const t of new Set(b.map((n) => splitMode(n).test)))
      if (!distinctAfter.has(`${f}\t${t}`)) {
        const moved = filesAfter(t);
        if (moved.length > 0) console.log(`  MOVED: ${t} → ${moved.join(", ")}`);
        else {
          lost++;
          console.log(`  LOST: ${t}`);
        }
      }
  }
  console.log(
    `tests (name × mode): ${count(before)} → ${count(after)}; distinct test cases: ${distinct(before).size} → ${distinctAfter.size}; lost: ${lost}`,
  );
  if (lost > 0) process.exit(1);
}

const [cmd, ...rest] = process.argv.slice(2);
if (cmd === "list") list(rest);
else if (cmd === "compare" && rest.length === 2) compare(rest[0], rest[1]);
else {
  console.error("usage: node scripts/test-names.mjs list [jest paths…] | compare before.json after.json");
  process.exit(2);
}
