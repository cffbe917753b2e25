import { spawn } from "node:child_process";
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { delimiter, join } from "node:path";
import type { Logger } from "@aps/platform";

/**
 * Translation on when available (docs/design/search-and-translation.md#translation-engines): with no translation engine configured, the
 * all-in-one starts Apertium's APY server itself when the `apertium-apy` program is on the PATH
 * (Debian: `apt install apertium-apy apertium-eng-spa`), points the translation service at it
 * (`TRANSLATION_ENGINE=apertium`, `APERTIUM_URL`) and stops it on shutdown.
 */

/** The program Debian's `apertium-apy` package installs. */
export const APY_PROGRAM = "apertium-apy";

/** True when `file` is a regular file this process may execute. */
export function isExecutable(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The first `name` in the directories of `path` (a PATH value, `:`-separated) that is executable,
 * like `command -v`; undefined when there is none or `path` is empty. Relative entries are skipped.
 */
export function findOnPath(
  name: string,
  path: string | undefined,
  executable: (file: string) => boolean = isExecutable,
): string | undefined {
  for (const dir of (path ?? "").split(delimiter)) {
    if (!dir.startsWith("/")) continue;
    const file = join(dir, name);
    if (executable(file)) return file;
  }
  return undefined;
}

/** What the all-in-one does about a translation engine. */
export type ApertiumDecision = { start: true; program: string; modesDir: string } | { start: false; reason: string };

/** Seams of `decideApertium`: the PATH lookup and the check that the modes folder exists. */
export interface DecideSeams {
  which?: (name: string, path: string | undefined) => string | undefined;
  exists?: (path: string) => boolean;
}

/** The all-in-one's settings for APY (config.ts: `APS_START_APERTIUM`, `APS_APERTIUM_MODES`). */
export interface ApertiumSettings {
  /** `auto` (default): start APY when it is installed and no engine is configured; `off`: never. */
  mode: "auto" | "off";
  /** Folder of the installed language pairs' `.mode` files. */
  modesDir: string;
}

/**
 * Whether to start APY: only when `TRANSLATION_ENGINE` is unset or empty in `env` (a configured
 * engine is used as it is), the mode is `auto`, `apertium-apy` is on `env.PATH`, and the modes
 * folder exists. When not, the reason says why (for the log line).
 */
export function decideApertium(
  env: NodeJS.ProcessEnv,
  { mode, modesDir }: ApertiumSettings,
  { which = findOnPath, exists = existsSync }: DecideSeams = {},
): ApertiumDecision {
  if (env.TRANSLATION_ENGINE)
    return { start: false, reason: `TRANSLATION_ENGINE=${env.TRANSLATION_ENGINE} is configured` };
  if (mode === "off") return { start: false, reason: "APS_START_APERTIUM=off" };
  const program = which(APY_PROGRAM, env.PATH);
  if (!program) return { start: false, reason: `${APY_PROGRAM} is not on the PATH` };
  if (!exists(modesDir)) return { start: false, reason: `no language pairs at ${modesDir}` };
  return { start: true, program, modesDir };
}

/** `env` with the started APY as the translation engine. */
export function withApertium(env: NodeJS.ProcessEnv, url: string): NodeJS.ProcessEnv {
  return { ...env, TRANSLATION_ENGINE: "apertium", APERTIUM_URL: url };
}

/** A running APY child process. */
export interface RunningApertium {
  /** `http://127.0.0.1:<port>` */
  url: string;
  pid: number;
  /** SIGTERM, then SIGKILL after 5 s; resolves once it exited. */
  stop(): Promise<void>;
}

/** A TCP port that was free a moment ago (APY takes a port number, not a listening socket). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve, reject) => s.once("error", reject).listen(0, "127.0.0.1", resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/**
 * Starts `program -p <free port> <modesDir>` and waits until `GET /listPairs` answers 200
 * (at most `readyMs`, default 60 s). Throws with APY's last stderr lines when it exits or does
 * not answer in time (the child is then killed).
 */
export async function startApertium(
  program: string,
  modesDir: string,
  log: Logger,
  readyMs = 60_000,
): Promise<RunningApertium> {
  const port = await freePort();
  const child = spawn(program, ["-p", String(port), modesDir], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr = (stderr + d.toString("utf8")).slice(-4_000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const spawnError = new Promise<never>((_, reject) => child.once("error", reject));
  spawnError.catch(() => undefined); // an error after start-up is seen as the exit below
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + readyMs;
  const ready = (async () => {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${program} exited (${child.exitCode}): ${stderr.trim()}`);
      try {
        if ((await fetch(`${url}/listPairs`, { signal: AbortSignal.timeout(2_000) })).ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline)
        throw new Error(`${program} did not answer ${url}/listPairs within ${readyMs} ms: ${stderr.trim()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  try {
    await Promise.race([ready, spawnError]);
  } catch (err) {
    await stop();
    throw err;
  }
  log.info({ url, pid: child.pid, modesDir }, "started Apertium APY as the translation engine");
  return { url, pid: child.pid!, stop };
}
