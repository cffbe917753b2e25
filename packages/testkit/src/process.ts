import { spawn, type ChildProcess } from "node:child_process";

/** A child process started by a test, with everything it printed. */
export interface TestProcess {
  child: ChildProcess;
  /** The first capture group of `readyPattern` (e.g. the base URL). */
  ready: string;
  output(): string;
  /** Sends `signal` (default SIGTERM) and waits for exit; resolves the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Spawns `node <args>` with `env` and waits (up to `timeoutMs`, default 180 000 ms: a first start initialises one embedded database per service, slow on a loaded 2-core machine) for a line
 * of stdout matching `readyPattern`. Rejects with the output when it exits or times out first.
 */
export function startNode(
  args: string[],
  env: NodeJS.ProcessEnv,
  readyPattern: RegExp,
  timeoutMs = 180_000,
): Promise<TestProcess> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`process did not become ready in ${timeoutMs} ms:\n${out.slice(-4000)}`));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = readyPattern.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout?.off("data", onData);
        child.stdout?.on("data", (x: Buffer) => (out += x.toString()));
        resolve({
          child,
          ready: m[1] ?? m[0],
          output: () => out,
          stop: async (signal = "SIGTERM") => {
            if (child.exitCode === null) child.kill(signal);
            return exited;
          },
        });
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`process exited (${code}) before ready:\n${out.slice(-4000)}`));
    });
  });
}
