import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";

/**
 * Workspace packages by name → their `src/` folder, for the source mode below.
 * @returns {Record<string, string>} e.g. `{ "@aps/forum": "services/forum/src" }`
 */
function workspaceSources() {
  const dirs = ["proto", ...["packages", "services"].flatMap((d) => readdirSync(d).map((p) => `${d}/${p}`))];
  return Object.fromEntries(
    dirs.flatMap((dir) => {
      try {
        return [[JSON.parse(readFileSync(`${dir}/package.json`, "utf8")).name, `${dir}/src`]];
      } catch {
        return [];
      }
    }),
  );
}

/**
 * `APS_TEST_FROM_SOURCE=1` (set by `scripts/test.mjs --source`, what `npm test -w <pkg>` runs): workspace
 * packages resolve to their TypeScript sources (`@aps/forum` → services/forum/src/index.ts,
 * `@aps/platform/telemetry` → packages/platform/src/telemetry.ts), compiled by @swc/jest like the
 * tests, so one package's tests need no build of the repository (docs/design/tests.md#test-tiers).
 */
const fromSource = process.env.APS_TEST_FROM_SOURCE === "1";
const sourceMapper = fromSource
  ? Object.fromEntries(
      Object.entries(workspaceSources()).flatMap(([name, src]) => [
        [`^${name}$`, `<rootDir>/${src}/index.ts`],
        // the package's manifest stays where it is (the gateway finds the client's packed tarball beside it)
        [`^${name}/package\\.json$`, `<rootDir>/${src.replace(/\/src$/, "")}/package.json`],
        [`^${name}/(.*?)(\\.js)?$`, `<rootDir>/${src}/$1`],
      ]),
    )
  : {};

/**
 * A test's time limit, 240 s — a bound on a hang, never a claim about speed — stretched by
 * `TEST_TIME_SCALE` (a number ≥ 1; `auto`, the load per core that @aps/testkit reads at each wait,
 * is read here once, at the run's start, and counts at least 2: the load rises after it). In ms.
 * docs/design/tests.md "Waiting".
 */
function testTimeoutMs() {
  const v = process.env.TEST_TIME_SCALE?.trim();
  if (!v) return 240_000;
  const scale = v === "auto" ? Math.max(2, Math.min(10, loadavg()[0] / availableParallelism())) : Number(v);
  return Math.round(240_000 * (Number.isFinite(scale) && scale >= 1 ? scale : 1));
}

/**
 * One jest run over every workspace (`npm test`): unit tests beside the code
 * (packages/*\/src/**\/*.test.ts, services/*\/src/**\/*.test.ts) and cross-service tests in test/. TypeScript is compiled by
 * @swc/jest to ESM; workspace packages resolve to their built dist (npm test builds first), or to their sources
 * under APS_TEST_FROM_SOURCE=1.
 * @type {import('jest').Config}
 */
export default {
  testEnvironment: "node",
  testMatch: [
    "<rootDir>/packages/*/src/**/*.test.ts",
    "<rootDir>/services/*/src/**/*.test.ts",
    "<rootDir>/test/**/*.test.ts",
  ],
  extensionsToTreatAsEsm: [".ts"],
  transform: {
    "^.+\\.ts$": [
      "@swc/jest",
      { jsc: { target: "es2022", parser: { syntax: "typescript" } }, module: { type: "es6" } },
    ],
  },
  moduleNameMapper: { ...sourceMapper, "^(\\.{1,2}/.*)\\.js$": "$1" },
  testTimeout: testTimeoutMs(),
  // Every request of the suites under test/ is validated against the OpenAPI document (docs/design/edge.md#contract-checks).
  // Explicit per-test and hook time limits stretch with TEST_TIME_SCALE (docs/design/tests.md "Waiting").
  setupFilesAfterEnv: ["<rootDir>/test/support/time-scale.setup.ts", "<rootDir>/test/support/contract.setup.ts"],
  // One test file at a time: the suites start whole systems (several processes and databases
  // each), and two at once on a 2-core machine turn load into timeouts.
  maxWorkers: 1,
  verbose: false,
  reporters: ["default", "<rootDir>/test/support/summary-reporter.cjs"],
  // What a test left open is named after the run (sockets, servers, child processes), and the run
  // then ends: one forgotten handle must not hold CI until its time limit (docs/design/tests.md#open-handles-and-the-end-of-a-run).
  globalTeardown: "<rootDir>/test/support/open-handles.cjs",
  // One real initdb per run: embedded systems on fresh data folders copy its cluster (docs/design/tests.md#template-databases).
  globalSetup: "<rootDir>/test/support/global-setup.cjs",
  forceExit: true,
};
