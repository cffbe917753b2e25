#!/usr/bin/env node
// Stress mode (docs/design/tests.md "Stress mode"): runs test files — or the whole suite — several times
// while a CPU hog holds every core busy, and prints each test's pass count over the runs. A test
// that passes only on a quiet machine fails here, before CI finds it.
//
//   npm run test:stress -- <files…>              the files, 5 runs, a busy loop on every core
//   npm run test:stress -- --changed             the test files this branch touched (see below)
//   npm run test:stress -- --suite --runs 3      the README's whole test command (its lanes), 3 times
//
// Options: --runs N (default 5); --changed[=<git ref>] the test files changed since the ref
// (default: the upstream branch, else origin/main, else the last commit) plus uncommitted and new
// ones, and the test files that import a changed test helper; --suite the whole suite in its lanes
// (scripts/suite.mjs); --hog N busy threads (default: one per core; 0 = no hog); --no-build;
// --save <file> writes every run's outcomes there (JSON lines `{run, file, name, status}`).
// Anything else starting with "-" is passed to jest. TEST_TIME_SCALE stays as set, else "auto"
// (deadlines stretched by the load, @aps/testkit's wait.ts) — what CI sets.
// Exit 1 when any test failed in any run.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ALONE, ALONE_IMAGE, WAIT_IMAGE, allTestFiles } from "./suite.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));

/** Command-line options: `{ runs, suite, changed, hog, build, files, jestArgs }`. Exits 2 on a bad option. */
function parseArgs(argv) {
  const o = {
    runs: 5,
    suite: false,
    changed: undefined,
    hog: availableParallelism(),
    build: true,
    files: [],
    jestArgs: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = (name) => {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 0) usage(`${name} takes a whole number, got ${argv[i]}`);
      return v;
    };
    if (a === "--runs") o.runs = Math.max(1, num("--runs"));
    else if (a === "--hog") o.hog = num("--hog");
    else if (a === "--suite") o.suite = true;
    else if (a === "--no-build") o.build = false;
    else if (a === "--save") o.save = argv[++i];
    else if (a === "--changed") o.changed = "";
    else if (a.startsWith("--changed=")) o.changed = a.slice("--changed=".length);
    else if (a.startsWith("-")) o.jestArgs.push(a);
    else o.files.push(a);
  }
  return o;
}

function usage(why) {
  console.error(
    `test:stress: ${why}\nusage: npm run test:stress -- [--runs N] [--hog N] [--changed[=<ref>] | --suite | <files…>]`,
  );
  process.exit(2);
}

const git = (...args) =>
  execFileSync("git", args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
const tryGit = (...args) => {
  try {
    return git(...args).trim();
  } catch {
    return undefined;
  }
};

/**
 * The test files the current branch touched since `ref` (default: upstream, origin/main, HEAD~1),
 * with uncommitted and untracked changes, plus every test file that imports a touched non-test
 * file under test/ (a suite module or a support helper). Paths relative to the root.
 */
function changedTestFiles(ref) {
  const base =
    ref ||
    (tryGit("rev-parse", "--verify", "-q", "@{upstream}") && "@{upstream}") ||
    (tryGit("rev-parse", "--verify", "-q", "origin/main") && "origin/main") ||
    "HEAD~1";
  const since = tryGit("merge-base", base, "HEAD") ?? base;
  console.log(`[stress] --changed: files changed since ${base} (${since.slice(0, 10)}), uncommitted and new ones`);
  const touched = new Set(
    [
      ...git("diff", "--name-only", since).split("\n"),
      ...git("ls-files", "--others", "--exclude-standard").split("\n"),
    ].filter((f) => f && existsSync(join(root, f))),
  );
  const all = allTestFiles();
  const tests = new Set(all.filter((f) => touched.has(f)));
  const helpers = [...touched].filter((f) => /^test\/.*\.ts$/.test(f) && !f.endsWith(".test.ts"));
  for (const h of helpers) {
    const stem = basename(h, ".ts");
    for (const f of all)
      if (new RegExp(`from "[^"]*/${stem}\\.js"`).test(readFileSync(join(root, f), "utf8"))) tests.add(f);
  }
  return [...tests].sort();
}

/**
 * Starts `n` busy threads in a child process (the CPU hog); returns a function that stops it. The
 * child also ends by itself within a second of this process ending, however that ends (a SIGKILL
 * leaves no hog behind).
 */
function startHog(n) {
  if (n === 0) return () => {};
  const code = `const { Worker } = require("node:worker_threads");
for (let i = 0; i < ${n}; i++) new Worker("for (;;) {}", { eval: true });
setInterval(() => { try { process.kill(${process.pid}, 0); } catch { process.exit(0); } }, 1000);`;
  const child = spawn(process.execPath, ["-e", code], { stdio: "ignore" });
  return () => child.kill("SIGKILL");
}

/** Runs one child to its end, output passed through; resolves its exit code. */
function run(args, env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, env, stdio: "inherit" });
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const o = parseArgs(process.argv.slice(2));
let files = o.files;
if (o.changed !== undefined) files = [...new Set([...files, ...changedTestFiles(o.changed)])];
if (!o.suite && files.length === 0) {
  if (o.changed !== undefined) {
    console.log("[stress] no test file changed: nothing to run");
    process.exit(0);
  }
  usage("name test files, --changed or --suite");
}
for (const f of files) if (!existsSync(join(root, f))) usage(`no such file: ${f}`);
if (o.build) {
  const r = spawnSync(
    process.execPath,
    [join(root, "node_modules/turbo/bin/turbo"), "run", "build", "--output-logs=errors-only"],
    {
      cwd: root,
      stdio: "inherit",
    },
  );
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const tmp = mkdtempSync(join(tmpdir(), "aps-stress-"));
const stopHog = startHog(o.hog);
process.on("exit", stopHog);
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(130));
console.log(
  `[stress] ${o.suite ? "the whole suite" : `${files.length} file(s)`} × ${o.runs} runs, ${o.hog} busy thread(s) on ${availableParallelism()} cores, TEST_TIME_SCALE=${process.env.TEST_TIME_SCALE ?? "auto"}`,
);
const summary = [];
for (let i = 1; i <= o.runs; i++) {
  const out = join(tmp, `run-${i}.jsonl`);
  const env = { ...process.env, TEST_TIME_SCALE: process.env.TEST_TIME_SCALE ?? "auto", APS_TEST_OUTCOMES_OUT: out };
  // a plain jest run takes the main lane's process modes unless told otherwise; container suites
  // take the container modes (scripts/suite.mjs)
  if (!o.suite && !env.APS_TEST_MODES && !files.some((f) => WAIT_IMAGE.includes(f) || ALONE_IMAGE.includes(f)))
    env.APS_TEST_MODES = "embedded,distributed";
  const alone = (f) => ALONE.includes(f) || ALONE_IMAGE.includes(f);
  const ordered = [...files.filter((f) => !alone(f)), ...files.filter(alone)];
  const args = o.suite
    ? [join(root, "scripts/suite.mjs")]
    : [join(root, "scripts/suite.mjs"), "--runTestsByPath", ...ordered, ...o.jestArgs];
  const t0 = Date.now();
  const loads = [];
  const sampler = setInterval(() => loads.push(loadavg()[0]), 5_000);
  console.log(`[stress] run ${i}/${o.runs}`);
  const code = await run(args, env);
  clearInterval(sampler);
  const outcomes = existsSync(out)
    ? readFileSync(out, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
  const count = (s) => outcomes.filter((x) => x.status === s).length;
  const meanLoad = loads.length ? loads.reduce((a, b) => a + b, 0) / loads.length : loadavg()[0];
  summary.push({
    i,
    code,
    s: (Date.now() - t0) / 1000,
    load: meanLoad,
    outcomes,
    passed: count("passed"),
    failed: count("failed"),
    skipped: count("skipped"),
  });
  // each run's line as it ends, so a long stress run shows its progress (and what a cut-off run reached)
  const r = summary.at(-1);
  console.log(
    `[stress] run ${i}/${o.runs} ended: ${r.s.toFixed(0)} s, mean load ${r.load.toFixed(1)}, tests ${r.passed}/${r.failed}/${r.skipped} passed/failed/skipped, exit ${code}`,
  );
}
stopHog();

// Each test's pass count over the runs; a test that ran in fewer runs than others counts its absences as failures.
const tests = new Map();
for (const r of summary)
  for (const t of r.outcomes) {
    const k = `${t.file} › ${t.name}`;
    const e = tests.get(k) ?? { passed: 0, failed: 0, skipped: 0 };
    e[t.status]++;
    tests.set(k, e);
  }
const lines = [...tests.entries()].sort(([a], [b]) => a.localeCompare(b));
const unsteady = lines.filter(([, e]) => e.failed > 0 || (e.passed > 0 && e.passed < o.runs));
console.log(
  `\n[stress] runs (wall s, mean 1-min load on ${availableParallelism()} cores, tests passed/failed/skipped, exit):`,
);
for (const r of summary)
  console.log(
    `  run ${r.i}: ${r.s.toFixed(0)} s, load ${r.load.toFixed(1)}, ${r.passed}/${r.failed}/${r.skipped}, exit ${r.code}`,
  );
if (lines.length <= 200) {
  console.log(`[stress] each test's passes of ${o.runs} runs:`);
  for (const [k, e] of lines) console.log(`  ${e.passed}/${o.runs}${e.skipped ? ` (skipped ${e.skipped})` : ""}  ${k}`);
} else {
  const steady = lines.filter(([, e]) => e.passed === o.runs).length;
  console.log(
    `[stress] ${steady} of ${lines.length} tests passed ${o.runs}/${o.runs}; ${lines.filter(([, e]) => e.passed === 0 && e.failed === 0).length} only skipped`,
  );
}
if (unsteady.length > 0) {
  console.log(`[stress] tests that did not pass every run (${unsteady.length}):`);
  for (const [k, e] of unsteady) console.log(`  ${e.passed}/${o.runs}  ${k}`);
}
if (o.save)
  writeFileSync(
    o.save,
    summary.flatMap((r) => r.outcomes.map((t) => JSON.stringify({ run: r.i, ...t }) + "\n")).join(""),
  );
rmSync(tmp, { recursive: true, force: true });
const bad = unsteady.length > 0 || summary.some((r) => r.code !== 0);
console.log(
  bad
    ? "[stress] UNSTEADY: fix the tests above (docs/design/tests.md)"
    : `[stress] steady: every test passed all ${o.runs} runs`,
);
process.exit(bad ? 1 : 0);
