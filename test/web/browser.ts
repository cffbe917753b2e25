import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { ROOT } from "../support/system.js";

/**
 * Browser support for the web-page tests (docs/design/edge.md#web-pages): Debian's chromium driven by playwright-core.
 * `CHROMIUM_PATH` overrides `/usr/bin/chromium`. Without a browser the suites skip LOUDLY; under
 * `APS_TEST_REQUIRE_REAL=1` (CI) a missing browser is a failure instead.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Screenshots and measurements of the browser tests (gitignored). */
export const ARTIFACTS = join(ROOT, "test/artifacts/web");

/**
 * Flags for chromium on a closed network: without the background-networking/component/sync
 * switches it stalls waiting for Google endpoints; --no-sandbox because CI runs as root.
 */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** True when the browser exists; throws under APS_TEST_REQUIRE_REAL=1 when it does not. */
export function hasChromium(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.APS_TEST_REQUIRE_REAL === "1")
    throw new Error(
      `APS_TEST_REQUIRE_REAL=1 but no chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`,
    );
  console.warn(`SKIPPED browser tests: no chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
  return false;
}

/** Launches headless chromium with a fresh profile (playwright's launch makes a new temporary user-data-dir). */
export async function launch(): Promise<Browser> {
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 60_000 });
}

/** The server root of a system (`baseUrl` without `/v1`). */
export function rootOf(baseUrl: string): string {
  return baseUrl.replace(/\/v1$/, "");
}
