import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/**
 * Makes sure the built `dist/` of workspace package `pkg` (e.g. `"@aps/platform"`) and of the
 * packages it depends on exists, for a test that runs built code in a child process (a fresh
 * Node has no jest transform). Under `npm test` the whole repository is built before jest starts,
 * so nothing is done; under `APS_TEST_FROM_SOURCE=1` (`npm test -w <pkg>`, which builds nothing:
 * docs/design/tests.md#test-tiers) it runs turbo's cached build of that package alone (seconds when up to date).
 * Throws when the build fails (turbo's output is in the message).
 */
export function ensureBuilt(pkg: string): void {
  if (process.env.APS_TEST_FROM_SOURCE !== "1") return;
  execFileSync(
    process.execPath,
    [`${ROOT}node_modules/turbo/bin/turbo`, "run", "build", `--filter=${pkg}`, "--output-logs=errors-only"],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1" } },
  );
}
