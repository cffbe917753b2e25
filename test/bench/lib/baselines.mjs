// Read baselines (docs/performance.md): the real responses of the system are recorded first,
// then served byte for byte by a bare node:http process and a minimal express 5 process
// (baseline-server.mjs), so that the three are loaded with the same requests for the same bytes.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cleanupStarted, onCleanup } from "./cleanup.mjs";

const SERVER = fileURLToPath(new URL("./baseline-server.mjs", import.meta.url));

/**
 * Fetches each path (e.g. `/v1/posts?sort=hot&limit=25`) from `origin` without compression and
 * returns `{ path, contentType, body }` (body base64). Throws on a non-200 answer.
 * @param {string} origin `http://127.0.0.1:<port>`
 * @param {string[]} paths
 */
export async function recordResponses(origin, paths) {
  const out = [];
  for (const path of paths) {
    const r = await fetch(origin + path, { headers: { "accept-encoding": "identity" } });
    const body = Buffer.from(await r.arrayBuffer());
    if (r.status !== 200) throw new Error(`recording ${path}: ${r.status} ${body.toString().slice(0, 200)}`);
    out.push({
      path,
      contentType: r.headers.get("content-type") ?? "application/octet-stream",
      body: body.toString("base64"),
    });
  }
  return out;
}

/**
 * Starts one baseline server process (`kind` bare | express) serving `responses` (written to
 * `dir`). Resolves `{ origin, pid, stop }` once it listens; `stop` is also registered for cleanup.
 * @param {"bare" | "express"} kind
 * @param {{ path: string, contentType: string, body: string }[]} responses
 * @param {string} dir a temp folder the bench owns
 */
export async function startBaseline(kind, responses, dir) {
  if (cleanupStarted()) throw new Error("interrupted");
  const file = join(dir, `responses-${kind}.json`);
  writeFileSync(file, JSON.stringify(responses));
  const child = spawn(process.execPath, [SERVER, kind, file], { stdio: ["ignore", "pipe", "inherit"] });
  const stop = onCleanup(`stop ${kind} baseline`, async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const t = setTimeout(() => child.kill("SIGKILL"), 5000);
    await gone;
    clearTimeout(t);
  });
  const port = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (c) => reject(new Error(`${kind} baseline exited (${c})`)));
  }).catch(async (err) => {
    await stop();
    throw err;
  });
  return { origin: `http://127.0.0.1:${port}`, pid: child.pid, stop };
}
