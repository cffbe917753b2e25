/**
 * Prints the closing lines of a jest run in a runner-neutral form, for CI readers and people:
 *
 *   tests: N passed, N failed, N skipped
 *   failed: <file> › <test's full name>: <its error in one line> (one line per failed test)
 *   files: N crashed            (only when some did; then one line per file with its error)
 *   skipped: N in <file> › <names down to the one with the reason> (one line per group; the reason is in the name)
 *   modes: <file>: <mode>, … (one line per file whose tests run in the run modes of test/support/system.ts)
 *   slowest files (of N, S s in all): then the 25 slowest, seconds each
 *   most CPU (of N files, S CPU-s in all): then the 15 that used the most, CPU seconds each
 *
 * With `APS_TEST_TIMINGS_OUT=<file>`, the counts and each file's seconds are also written there as
 * JSON (`{ passed, failed, skipped, crashed: ["<file>: <error>"], failures: ["<file> › <name>: <error>"],
 * files: { "<file>": seconds }, cpu: { "<file>": CPU seconds } }`), so
 * scripts/suite.mjs can sum its lanes and list their slowest files together.
 *
 * With `APS_TEST_OUTCOMES_OUT=<file>`, every test's outcome is appended there as one JSON line
 * (`{"file","name","status"}`, status `passed`/`failed`/`skipped`; a crashed file as one line with
 * name `(file crashed)`): scripts/stress.mjs counts each test's passes over its runs with it.
 *
 * Skipped (`it.skip`, `describe.skip`, todo) tests count as skipped, never as passed. A file that
 * crashed (an error while loading it or in a hook outside any test, e.g. APS_TEST_REQUIRE_REAL=1
 * and a missing dependency) ran none of its tests, so jest's test counts miss it: it is listed
 * here and counted as failed in the totals (docs/design/tests.md#loud-skips).
 */
const path = require("node:path");
const { appendFileSync, readFileSync, writeFileSync } = require("node:fs");

/** Clock ticks per second of /proc/<pid>/stat times (`getconf CLK_TCK`; 100 on Linux x86-64 and arm64). */
const CLK_TCK = 100;

/**
 * CPU seconds of this jest process and of its children it has reaped (Linux /proc/self/stat:
 * utime + stime + cutime + cstime), or null where /proc is not there. jest.config.js runs the files
 * one at a time in this process (maxWorkers 1), so a file's delta is its CPU: its in-jest systems,
 * and the processes it started and stopped (a distributed topology, an embedded PostgreSQL) — not
 * the machine's PostgreSQL and NATS servers, nor containers (docs/design/tests.md#the-lanes).
 */
function cpuSeconds() {
  try {
    const s = readFileSync("/proc/self/stat", "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / CLK_TCK;
  } catch {
    return null;
  }
}

/** The run modes of test/support/system.ts, as test names carry them: "… (embedded) …", "… (real, …)". */
const MODE_IN_NAME = /\((distributed-containers|aio-container|aio-process|distributed|embedded|real)[,;)]/;

/** The run modes a file's tests ran (or were listed) in, in order of first appearance. */
function modesOf(r) {
  const modes = new Set();
  for (const t of r.testResults) {
    const m = MODE_IN_NAME.exec(t.fullName ?? [...t.ancestorTitles, t.title].join(" "));
    if (m) modes.add(m[1]);
  }
  return [...modes];
}

/** The file's first error line (jest's testExecError or failureMessage), without ANSI colours. */
function firstLine(r) {
  const text = String(r.testExecError?.message || r.failureMessage || "error").replace(/\u001b\[[0-9;]*m/g, "");
  return (
    text
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l && !l.startsWith("●")) ?? "error"
  );
}

/**
 * A failed test's error in one line: its first four non-empty lines before the stack (e.g.
 * "Error: expect(received).toBe(expected) | Expected: 3 | Received: 2"), without ANSI colours,
 * at most 400 characters.
 */
function firstErrorLine(t) {
  const text = String(t.failureMessages?.[0] ?? "error").replace(/\u001b\[[0-9;]*m/g, "");
  const lines = text.split("\n").map((l) => l.trim());
  const end = lines.findIndex((l) => l.startsWith("at "));
  const head = (end < 0 ? lines : lines.slice(0, end)).filter((l) => l.length > 0).slice(0, 4);
  return (head.join(" | ") || "error").slice(0, 400);
}

/**
 * The name a skipped test is grouped under: its titles (outermost describe first, the test last)
 * down to the first one that gives the reason (it says "SKIPPED" or "skipped: …"), so the line shows why; a skip whose
 * names give no reason is grouped under its outermost name and marked "(no reason in its name)".
 */
function skipGroup(t) {
  const titles = [...t.ancestorTitles, t.title];
  const i = titles.findIndex((x) => /skipped/i.test(x));
  if (i >= 0) return titles.slice(0, i + 1).join(" › ");
  return `${titles[0]} (no reason in its name)`;
}

class SummaryReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig?.rootDir ?? process.cwd();
    /** CPU seconds at each file's start, then each file's CPU seconds (cpuSeconds), by path. */
    this.cpuAtStart = new Map();
    this.cpu = new Map();
  }

  onTestStart(test) {
    this.cpuAtStart.set(test.path, cpuSeconds());
  }

  onTestResult(test) {
    const a = this.cpuAtStart.get(test.path);
    const b = cpuSeconds();
    if (a !== null && a !== undefined && b !== null) this.cpu.set(test.path, Math.round((b - a) * 100) / 100);
  }

  onRunComplete(_contexts, results) {
    const crashed = results.testResults.filter(
      (r) => r.testExecError || (r.failureMessage && r.numFailingTests === 0 && r.numPassingTests === 0),
    );
    const skippedTests = results.testResults.flatMap((r) =>
      r.testResults
        .filter((t) => t.status === "pending" || t.status === "skipped" || t.status === "todo")
        .map((t) => `${path.relative(this.rootDir, r.testFilePath)} › ${skipGroup(t)}`),
    );
    const skipped = results.numPendingTests + results.numTodoTests;
    const failed = results.numFailedTests + crashed.length;
    const out = [`\ntests: ${results.numPassedTests} passed, ${failed} failed, ${skipped} skipped`];
    // Each failed test by name, so the end of a long CI log says which one (the landing run of
    // 951c747 printed "1 failed" and nothing that named it).
    const failures = results.testResults.flatMap((r) =>
      r.testResults
        .filter((t) => t.status === "failed")
        .map(
          (t) =>
            `${path.relative(this.rootDir, r.testFilePath)} › ${t.fullName ?? [...t.ancestorTitles, t.title].join(" ")}: ${firstErrorLine(t)}`,
        ),
    );
    for (const f of failures) out.push(`  failed: ${f}`);
    if (crashed.length > 0) {
      out.push(`files: ${crashed.length} crashed (none of their tests ran; each counted once as failed above)`);
      for (const r of crashed) out.push(`  crashed: ${path.relative(this.rootDir, r.testFilePath)}: ${firstLine(r)}`);
    }
    const names = new Map();
    for (const n of skippedTests) names.set(n, (names.get(n) ?? 0) + 1);
    for (const [n, c] of names) out.push(`  skipped: ${c} in ${n}`);
    // Which run modes each suite used (docs/design/tests.md#test-tiers "Run modes").
    for (const r of results.testResults) {
      const modes = modesOf(r);
      if (modes.length > 0) out.push(`modes: ${path.relative(this.rootDir, r.testFilePath)}: ${modes.join(", ")}`);
    }
    // The slowest files, so the suite's time budget (CI: 30 min, docs/design/tests.md#container-systems) is kept where it is spent.
    const timed = results.testResults
      .map((r) => ({
        file: path.relative(this.rootDir, r.testFilePath),
        s: ((r.perfStats?.end ?? NaN) - (r.perfStats?.start ?? NaN)) / 1000,
      }))
      .filter((t) => Number.isFinite(t.s))
      .sort((a, b) => b.s - a.s);
    if (process.env.APS_TEST_OUTCOMES_OUT) {
      const status = (t) => (t.status === "passed" ? "passed" : t.status === "failed" ? "failed" : "skipped");
      const lines = results.testResults.flatMap((r) => {
        const file = path.relative(this.rootDir, r.testFilePath);
        if (crashed.includes(r)) return [{ file, name: "(file crashed)", status: "failed" }];
        return r.testResults.map((t) => ({
          file,
          name: t.fullName ?? [...t.ancestorTitles, t.title].join(" "),
          status: status(t),
        }));
      });
      if (lines.length > 0)
        appendFileSync(process.env.APS_TEST_OUTCOMES_OUT, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    }
    if (process.env.APS_TEST_TIMINGS_OUT)
      writeFileSync(
        process.env.APS_TEST_TIMINGS_OUT,
        JSON.stringify({
          passed: results.numPassedTests,
          failed,
          skipped,
          // each with its first error line, so the suite's summary says why (CI's log keeps only its end)
          crashed: crashed.map((r) => `${path.relative(this.rootDir, r.testFilePath)}: ${firstLine(r)}`),
          failures,
          files: Object.fromEntries(timed.map((t) => [t.file, t.s])),
          cpu: Object.fromEntries([...this.cpu].map(([f, c]) => [path.relative(this.rootDir, f), c])),
        }),
      );
    if (timed.length > 1) {
      const total = timed.reduce((n, t) => n + t.s, 0);
      out.push(`slowest files (of ${timed.length}, ${Math.round(total)} s in all):`);
      for (const t of timed.slice(0, 25)) out.push(`  ${t.s.toFixed(1).padStart(7)} s  ${t.file}`);
    }
    if (this.cpu.size > 1) out.push(...mostCpu(Object.fromEntries(this.cpu), this.rootDir));
    process.stdout.write(`${out.join("\n")}\n`);
  }
}
/**
 * The lines "most CPU (of N files, S CPU-s in all):" and the 15 files that used the most, from
 * `{ file: CPU seconds }` (paths made relative to `root`). scripts/suite.mjs prints the same for all lanes.
 */
function mostCpu(cpu, root) {
  const rows = Object.entries(cpu).sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((n, [, c]) => n + c, 0);
  return [
    `most CPU (of ${rows.length} files, ${Math.round(total)} CPU-s in all, this jest process and its children):`,
    ...rows
      .slice(0, 15)
      .map(([f, c]) => `  ${c.toFixed(1).padStart(7)} s  ${path.relative(root, path.resolve(root, f))}`),
  ];
}

module.exports = SummaryReporter;
module.exports.mostCpu = mostCpu;
