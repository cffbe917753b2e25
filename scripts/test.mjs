#!/usr/bin/env node
// Runs part of the jest suite from the repository root:
//   node scripts/test.mjs --source services/forum/   (what `npm test -w @aps/forum` runs: no build)
//   node scripts/test.mjs packages services test/platform test/ops/service-list.test.ts   (`npm run test:fast`)
// Arguments are jest path patterns and flags (`--watch`, `-t name`), passed through. The whole suite is `npm test`.
// Without --source, workspace packages resolve to their built dist/, so turbo's (cached) build comes first.
// With --source, they resolve to their TypeScript sources (jest.config.js, APS_TEST_FROM_SOURCE) and
// nothing is built: one package's tests start in seconds after an edit (docs/design/tests.md#test-tiers).
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);
const fromSource = args.includes("--source");
// --no-build: the built dist/ as it is (CI's Node 24 leg, beside a suite that reads dist/: a
// turbo cache hit would restore the files under it)
const noBuild = fromSource || args.includes("--no-build");
const jestArgs = args.filter((a) => a !== "--source" && a !== "--no-build");
const run = (cmd, args, env = process.env) => {
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit", env });
  if (r.status !== 0) process.exit(r.status ?? 1);
};
if (!noBuild)
  run(process.execPath, [join(root, "node_modules/turbo/bin/turbo"), "run", "build", "--output-logs=errors-only"]);
run(
  process.execPath,
  [
    "--experimental-vm-modules",
    "--no-warnings=ExperimentalWarning",
    join(root, "node_modules/jest/bin/jest.js"),
    ...jestArgs,
  ],
  fromSource ? { ...process.env, APS_TEST_FROM_SOURCE: "1" } : process.env,
);
