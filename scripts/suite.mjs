#!/usr/bin/env node
// The whole test suite in lanes (what `npm test` runs after its build; docs/design/tests.md#the-lanes):
//   main   every file but the lists below, in chunks of MAIN_CHUNK files, a jest process each
//          (route suites in their process modes: APS_TEST_MODES=embedded,distributed; api and
//          notifications among them), after the shared files;
//   wait   beside it, in a second jest process: the fault and container suites, which mostly wait
//          (on containers, restarts, redeliveries); first those that need no image, then the
//          container suites (test/e2e/image.test.ts: api and notifications in the container modes,
//          on one system per mode, docs/design/tests.md#container-systems) once the image is there and the suites that wait
//          for the jobs beside the suite to end, whichever gate opens first (docs/design/tests.md#the-lanes);
//   shared the long main-lane files, then the main lane's chunks: any lane takes the next when it has
//          nothing else to run (docs/design/tests.md), and a third lane, "extra", takes them too once
//          the jobs beside the suite have ended;
//   alone  after both: the timing-sensitive suites that compute, one file at a time, while
//   beside runs those that mostly wait, one at a time; then
//   rehearsal  the production rehearsal, with nothing beside it.
// Then one summary for the lanes: tests passed/failed/skipped, the files that crashed, each lane's
// wall time and the 25 slowest files. Exits 1 when any lane failed.
//
//   node scripts/suite.mjs                 all lanes
//   node scripts/suite.mjs <jest args…>    one plain jest run with those arguments (no lanes)
//
// Environment: APS_SUITE_TIMES_OUT=<file> writes every file's seconds there (JSON, slowest first),
// and APS_SUITE_CPU_OUT=<file> every file's CPU seconds (its jest process and children, most first);
// APS_TEST_IMAGE_READY=<file> makes the wait lane's container part wait until the file
// exists (.ci/run writes "ok" there when the image build ends, anything else when it failed);
// APS_TEST_ALONE_AFTER=<file> makes the last lanes wait until that file exists (.ci/run writes it
// when the jobs it runs beside the suite have ended), so they hold on a busy CI machine too.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createRequire } from "node:module";

const root = fileURLToPath(new URL("..", import.meta.url));
/** The summary reporter's "most CPU" lines (test/support/summary-reporter.cjs), for all lanes together. */
const { mostCpu } = createRequire(import.meta.url)("../test/support/summary-reporter.cjs");
const jestArgs = [
  "--experimental-vm-modules",
  "--no-warnings=ExperimentalWarning",
  join(root, "node_modules/jest/bin/jest.js"),
];

/**
 * The timing-sensitive suites that compute: a burst of 200 agents within the call deadline,
 * 12,000 events to one reader within 30 s, a drain under a load of writes. Run last, one at a
 * time, in the `alone` lane, beside ALONE_WAITING only (docs/design/tests.md#the-lanes).
 */
export const ALONE_COMPUTE = [
  "test/limits/concurrency-200.test.ts",
  "test/faults/sigterm.test.ts",
  // a reading client must get 12,000 events within 30 s while ten others are dropped: under the
  // load of the side jobs it got 10,400 and the later cases saw its backlog
  "test/abuse/event-streams.test.ts",
];
/**
 * The timing-sensitive suites that mostly wait on a clock or a restart: run last, one at a time,
 * in the `beside` lane, at the same time as ALONE_COMPUTE — both lists' files passed side by side
 * with their margins kept (docs/design/tests.md#the-lanes), where beside the other lanes and the
 * side jobs they did not.
 */
export const ALONE_WAITING = [
  // rows "inside retention" are seconds old there: a loaded machine ages them past it
  "test/scale/retention.test.ts",
  // webhook fan-out at 10 events/s to 50 endpoints for 30 s, delivery lag p99 < 5 s
  // (docs/design/notifications.md#per-endpoint-feed-cursor): a measure of throughput, which the side jobs' load alone pushes past the bar
  "test/scale/webhook-fanout.test.ts",
  "test/faults/postgres-restart.test.ts",
  "test/limits/store-outage.test.ts",
];
/** Every timing-sensitive suite of the last part (scripts/stress.mjs runs them after its other files). */
export const ALONE = [...ALONE_COMPUTE, ...ALONE_WAITING];
/** The wait lane's first part, no image needed: fault suites that wait more than they compute, and two long suites. */
export const WAIT_NO_IMAGE = [
  "test/faults/nats-restart.test.ts",
  "test/faults/service-kill.test.ts",
  "test/faults/notifications-kill.test.ts",
  "test/faults/event-outage.test.ts",
  // A long suite that needs nothing but this checkout, to balance the lanes: the main lane is
  // the longer one by far without it (measured, docs/design/tests.md#the-lanes), and the faults above leave a core idle.
  "test/e2e/import-peps.test.ts",
];
/**
 * The wait lane's middle part: pep-replay (276 agents joining at once, then 736 PEPs) starts once
 * the jobs beside the suite have ended (APS_TEST_ALONE_AFTER): started with them, its joins ran past
 * the gateway's deadline on the 2-core machine (a run of the abuse suites: 503 on /join 50 s in). sagacity
 * (hundreds of ballots and awards: 57 s alone, 244 s in the main lane beside the side jobs) runs
 * here too: it was the main lane's longest file, and the main lane was the long pole (docs/design/tests.md#the-lanes).
 */
export const WAIT_AFTER_QUIET = ["test/e2e/sagacity.test.ts", "test/e2e/pep-replay.test.ts"];
/**
 * Folders whose files all join the wait lane's first part: the abuse, scale-out
 * and agents' experience suites start their own systems in one mode each and wait on
 * clocks, budgets, replicas and slow peers more than they compute.
 */
export const WAIT_DIRS = ["test/abuse/", "test/scale/", "test/agents/"];
/**
 * Shared between the lanes (docs/design/tests.md#the-lanes): long main-lane files that need nothing but the process
 * modes, longest first (as measured under CI load). A lane takes the next one when it has nothing
 * else to run — the main lane after its own files, the wait lane while its gates are closed and
 * after its parts — so the two lanes end close together whatever the load, instead of one idling
 * while the other is the long pole. Each runs in a jest process of its own, in the process modes.
 */
export const SHARED = [
  // A main lane of its own files only ran ~280 s past the wait lane (a fresh-clone CI run: main
  // 1875 s, wait 1592 s, the wait lane idle at the end), so its longest files are here too.
  // the main lane's two longest own files in a CI run with the third lane (main 1200 s, the
  // others ~1160 s): here, they let the lanes end together
  "test/e2e/list-excerpts.test.ts",
  "test/e2e/bad-input.test.ts",
  "test/web/perf.test.ts",
  "test/e2e/idempotency.test.ts",
  "test/e2e/api.test.ts",
  "test/deploy/backup-restore.test.ts",
  "services/knowledge/src/peps-typos.test.ts",
  "test/e2e/fuzz.test.ts",
  "test/ops/helm.test.ts",
  "test/e2e/translation.test.ts",
  "test/web/pages.test.ts",
  "test/e2e/forum-depth.test.ts",
  "test/e2e/concurrency.test.ts",
  "test/e2e/tracing.test.ts",
  "packages/client/src/drift.test.ts",
  "test/limits/rate-limits.test.ts",
  "test/e2e/council-depth.test.ts",
  "test/e2e/council.test.ts",
  "services/knowledge/src/peps.test.ts",
  "test/e2e/mcp.test.ts",
];
/**
 * Main-lane files per jest process. The main lane's ~200 files in one process left it running
 * alone for the last 8 minutes of a CI run (both other lanes done, 60 % of 2 cores busy); in
 * chunks, every free lane takes them. A chunk of 8 is ~80 s of tests for ~3 s of jest start.
 */
const MAIN_CHUNK = 8;
/** The suites that run containers from the image: the wait lane's second part. */
export const WAIT_IMAGE = [
  "test/faults/containers.test.ts",
  "test/e2e/tracing-containers.test.ts",
  // the api and notifications suites in the all-in-one's container (APS_TEST_MODES), on one system;
  // their process modes are test/e2e/api.test.ts and notifications.test.ts, in the main lane
  "test/e2e/image.test.ts",
];
/**
 * The production rehearsal: the chart's render as containers, the api and notifications suites
 * through its gateway (mode chart-containers: the distributed topology in containers, as the
 * chart deploys it), a roll of the gateway and forum under load, a NATS server killed, Prometheus.
 * Its roll asserts that no request of 50/s fails: beside two other lanes and the side jobs it
 * failed 44 of ~5,000 in a CI run, so it runs in the alone lane, once the image is built.
 */
export const ALONE_IMAGE = ["test/deploy/rehearsal.test.ts"];
// distributed-containers (the topology as test/support wires it) is left to a run by hand: the
// rehearsal runs the same suites on the topology the chart deploys (docs/design/tests.md#container-systems)
const CONTAINER_MODES = "aio-container";
const PROCESS_MODES = "embedded,distributed";

/** Every test file of the jest config's `testMatch`, relative to the root. */
export function allTestFiles() {
  const walk = (dir) =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
      e.name === "node_modules" || e.name === "dist"
        ? []
        : e.isDirectory()
          ? walk(`${dir}/${e.name}`)
          : e.name.endsWith(".test.ts")
            ? [`${dir}/${e.name}`]
            : [],
    );
  const srcOf = (d) =>
    readdirSync(join(root, d)).flatMap((p) => (existsSync(join(root, d, p, "src")) ? walk(`${d}/${p}/src`) : []));
  return [...srcOf("packages"), ...srcOf("services"), ...walk("test")].sort();
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs one jest process on `files` with `env`, each output line prefixed with `[lane]`; resolves
 * `{ code, summary }` (summary: the reporter's JSON, docs in test/support/summary-reporter.cjs).
 */
function runJest(lane, files, env, tmp) {
  const timings = join(tmp, `${lane}-${Math.random().toString(36).slice(2)}.json`);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...jestArgs, "--runTestsByPath", ...files], {
      cwd: root,
      env: { ...process.env, ...env, APS_TEST_TIMINGS_OUT: timings },
      stdio: ["ignore", "pipe", "pipe"],
    });
    for (const stream of [child.stdout, child.stderr])
      createInterface({ input: stream }).on("line", (l) => process.stdout.write(`[${lane}] ${l}\n`));
    child.on("exit", (code, signal) => {
      let summary;
      try {
        summary = JSON.parse(readFileSync(timings, "utf8"));
      } catch {
        summary = {
          passed: 0,
          failed: 1,
          skipped: 0,
          crashed: [`(lane ${lane}: jest ended without a summary)`],
          files: {},
        };
      }
      resolve({ code: code ?? (signal ? 1 : 0), summary });
    });
  });
}

async function lanes() {
  const tmp = mkdtempSync(join(tmpdir(), "aps-suite-"));
  const started = Date.now();
  const runs = [];
  const wall = {};
  const timeline = [];
  const at = () => Math.round((Date.now() - started) / 1000);
  /**
   * The work any lane may take, not yet taken: each SHARED file alone (longest first), then the
   * main lane's own files in chunks of MAIN_CHUNK — so when a lane runs out of its own parts it
   * takes main-lane work rather than leaving a core idle while the main lane is the long pole
   * (docs/design/tests.md#the-lanes). Filled below, once the main lane's files are known.
   */
  const shared = SHARED.map((f) => ({ label: `shared ${f}`, files: [f] }));
  /**
   * Runs a lane's parts one after another. A part with a `gate` (a file .ci/run writes: the image
   * built, the side jobs ended) runs once its gate is open; among the parts left, the first whose
   * gate is open runs next, so a lane waiting on one gate runs the part whose gate opened first.
   * When no part can run, the lane takes the next SHARED file instead of idling, and it takes
   * them after its parts too (docs/design/tests.md#the-lanes). Each part's start, end and wait go to the timeline.
   */
  const lane = async (name, parts) => {
    const t0 = Date.now();
    const left = [...parts];
    const take = () => ({ ...shared.shift(), env: { APS_TEST_MODES: PROCESS_MODES } });
    while (left.length > 0 || shared.length > 0) {
      const waitFrom = at();
      let i = left.findIndex((p) => !p.gate || existsSync(p.gate));
      let part;
      if (i >= 0) [part] = left.splice(i, 1);
      else if (shared.length > 0) part = take();
      else {
        console.log(`[suite] ${name}: waiting for ${left.map((p) => p.what).join(" or ")}`);
        while ((i = left.findIndex((p) => existsSync(p.gate))) < 0) await sleep(1000);
        [part] = left.splice(i, 1);
      }
      const start = at();
      const why = part.check?.();
      if (why) runs.push({ code: 1, summary: { passed: 0, failed: 1, skipped: 0, crashed: [why], files: {} } });
      else if (part.files.length > 0) runs.push(await runJest(name, part.files, part.env, tmp));
      const waited = start > waitFrom ? ` (waited ${start - waitFrom} s for ${part.what})` : "";
      const what = part.label;
      timeline.push(
        `  ${name.padEnd(9)} ${what.padEnd(11)} ${String(start).padStart(5)}–${String(at()).padStart(5)} s${waited}`,
      );
    }
    wall[name] = (Date.now() - t0) / 1000;
  };
  const special = new Set([...ALONE, ...ALONE_IMAGE, ...WAIT_NO_IMAGE, ...WAIT_AFTER_QUIET, ...WAIT_IMAGE, ...SHARED]);
  const gone = [...special].filter((f) => !existsSync(join(root, f)));
  if (gone.length > 0) {
    console.error(`scripts/suite.mjs names test files that do not exist: ${gone.join(", ")}`);
    process.exit(1);
  }
  const waitDirs = allTestFiles().filter((f) => !special.has(f) && WAIT_DIRS.some((d) => f.startsWith(d)));
  for (const f of waitDirs) special.add(f);
  const main = allTestFiles().filter((f) => !special.has(f));
  const chunks = Math.ceil(main.length / MAIN_CHUNK);
  for (let i = 0; i < chunks; i++)
    shared.push({ label: `main ${i + 1}/${chunks}`, files: main.slice(i * MAIN_CHUNK, (i + 1) * MAIN_CHUNK) });
  const imageReady = process.env.APS_TEST_IMAGE_READY;
  const quiet = process.env.APS_TEST_ALONE_AFTER;
  const quietGate = { gate: quiet, what: "the jobs beside the suite to end" };
  /** The container suites' part: the image's gate, and its modes. */
  const imageGate = {
    env: { APS_TEST_MODES: CONTAINER_MODES },
    gate: imageReady,
    what: "the image build",
    check: () => {
      if (!imageReady) return undefined;
      const state = readFileSync(imageReady, "utf8").trim();
      return state === "ok" ? undefined : `the image build failed (${imageReady}: ${state}): container suites not run`;
    },
  };
  /**
   * A third lane of SHARED files only, from the moment the jobs beside the suite end (at once when
   * no gate is set): after them the two lanes left both cores 5–45 % idle for ~12 minutes of a CI
   * run (its per-minute CPU figures), and the SHARED files need nothing but the process modes.
   */
  const extra = async () => {
    if (quiet) while (!existsSync(quiet)) await sleep(1000);
    if (shared.length > 0) await lane("extra", []);
  };
  await Promise.all([
    extra(),
    // the main lane has no part of its own: it takes the shared work from the start
    lane("main", []),
    lane("wait", [
      { label: "no-image", files: WAIT_NO_IMAGE, env: {} },
      {
        // the new suites start a system each: beside the side jobs they slowed the main lane's
        // sagacity past the gateway's deadline (503 on a ballot), so they wait for the quiet too
        label: "after-quiet",
        files: [...waitDirs, ...WAIT_AFTER_QUIET],
        env: {},
        ...quietGate,
      },
      {
        // without APS_TEST_IMAGE the container suites say loudly that they skip; they run as soon
        // as the image is there, before the after-quiet part when the image comes first (docs/design/tests.md#the-lanes)
        label: "image",
        files: WAIT_IMAGE,
        ...imageGate,
      },
    ]),
  ]);
  // one jest process runs its files one at a time (jest.config.js maxWorkers: 1): the files that
  // compute beside those that wait, two at a time in all (docs/design/tests.md#the-lanes)
  await Promise.all([
    lane("alone", [{ label: "compute", files: ALONE_COMPUTE, env: {}, ...quietGate }]),
    lane("beside", [{ label: "waiting", files: ALONE_WAITING, env: {}, ...quietGate }]),
  ]);
  // the production rehearsal with nothing beside it
  await lane("rehearsal", [{ label: "rehearsal", files: ALONE_IMAGE, ...imageGate }]);
  rmSync(tmp, { recursive: true, force: true });

  const sum = (k) => runs.reduce((n, r) => n + r.summary[k], 0);
  const crashed = runs.flatMap((r) => r.summary.crashed);
  const failures = runs.flatMap((r) => r.summary.failures ?? []);
  const files = Object.entries(Object.assign({}, ...runs.map((r) => r.summary.files))).sort((a, b) => b[1] - a[1]);
  const cpu = Object.assign({}, ...runs.map((r) => r.summary.cpu ?? {}));
  const out = [
    "",
    `suite (all lanes): ${Math.round((Date.now() - started) / 1000)} s wall; lanes: ${Object.entries(wall)
      .map(([k, v]) => `${k} ${Math.round(v)} s`)
      .join(", ")}`,
    "lane timeline (seconds since the suite started):",
    ...timeline,
    `tests: ${sum("passed")} passed, ${sum("failed")} failed, ${sum("skipped")} skipped`,
    ...crashed.map((c) => `  crashed: ${c}`),
    ...failures.map((f) => `  failed: ${f}`),
    `slowest files (of ${files.length}, ${Math.round(files.reduce((n, [, s]) => n + s, 0))} s in all):`,
    ...files.slice(0, 25).map(([f, s]) => `  ${s.toFixed(1).padStart(7)} s  ${f}`),
    // where the CPU goes, for a CI run that is CPU-bound (docs/design/tests.md#the-lanes)
    ...mostCpu(cpu, root),
  ];
  console.log(out.join("\n"));
  // .ci/run prints these again as the log's last lines (APS_TEST_FAILURES_OUT), where a reader of
  // the log's tail looks first
  if (process.env.APS_TEST_FAILURES_OUT && (failures.length > 0 || crashed.length > 0))
    writeFileSync(
      process.env.APS_TEST_FAILURES_OUT,
      [...crashed.map((c) => `crashed: ${c}`), ...failures.map((f) => `failed: ${f}`)].join("\n") + "\n",
    );
  // every file's seconds, for the next change to the lanes (docs/design/tests.md#the-lanes)
  if (process.env.APS_SUITE_TIMES_OUT)
    writeFileSync(process.env.APS_SUITE_TIMES_OUT, JSON.stringify(Object.fromEntries(files), null, 1) + "\n");
  if (process.env.APS_SUITE_CPU_OUT)
    writeFileSync(
      process.env.APS_SUITE_CPU_OUT,
      JSON.stringify(Object.fromEntries(Object.entries(cpu).sort((a, b) => b[1] - a[1])), null, 1) + "\n",
    );
  process.exit(runs.some((r) => r.code !== 0) ? 1 : 0);
}

// Run as a script; scripts/stress.mjs imports the lists above and runs nothing here.
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const args = process.argv.slice(2);
  if (args.length > 0) {
    const child = spawn(process.execPath, [...jestArgs, ...args], { cwd: root, stdio: "inherit" });
    child.on("exit", (code) => process.exit(code ?? 1));
  } else await lanes();
}
