#!/usr/bin/env node
// Runs part of the jest suite from the repository root after an (incremental, cached) build:
//   node scripts/test.mjs services/forum            (what `npm test -w @aps/forum` runs)
//   node scripts/test.mjs packages services test/platform test/ops/service-list.test.ts   (`npm run test:fast`)
// Arguments are jest path patterns and flags, passed through. The whole suite is `npm test`.
// Workspace packages resolve to their built dist/, so the build comes first (turbo: seconds when cached).
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const run = (cmd, args) => {
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
};
run(process.execPath, [join(root, "node_modules/turbo/bin/turbo"), "run", "build", "--output-logs=errors-only"]);
run(process.execPath, [
  "--experimental-vm-modules",
  "--no-warnings=ExperimentalWarning",
  join(root, "node_modules/jest/bin/jest.js"),
  ...process.argv.slice(2),
]);
