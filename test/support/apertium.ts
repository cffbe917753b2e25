import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { waitStrictly } from "./wait.js";

/** Where the Debian package `apertium-apy` installs the server, and the installed pairs' modes. */
export const APY_BIN = "/usr/bin/apertium-apy";
export const APY_MODES = "/usr/share/apertium/modes";

/** A running Apertium APY server. */
export interface Apertium {
  url: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/**
 * Starts `apertium-apy -p <free port> /usr/share/apertium/modes` and waits (≤ 60 s) until
 * `/listPairs` answers. Returns undefined when APY is not installed: the caller skips LOUDLY, or
 * fails under `APS_TEST_REQUIRE_REAL=1` (CI installs apertium-apy and apertium-eng-spa).
 */
export async function startApertium(): Promise<Apertium | undefined> {
  if (!existsSync(APY_BIN) || !existsSync(APY_MODES)) {
    if (process.env.APS_TEST_REQUIRE_REAL === "1")
      throw new Error(
        `APS_TEST_REQUIRE_REAL=1 but ${APY_BIN} or ${APY_MODES} is missing (apt-get install apertium-apy apertium-eng-spa)`,
      );
    console.warn(`[apertium] NO APERTIUM APY at ${APY_BIN}: the real-engine translation tests are SKIPPED`);
    return undefined;
  }
  const port = await freePort();
  const child: ChildProcess = spawn(APY_BIN, ["-p", String(port), APY_MODES], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d) => (stderr = (stderr + String(d)).slice(-4_000)));
  const url = `http://127.0.0.1:${port}`;
  try {
    // until /listPairs answers (≤ 60 s, stretched on a loaded machine); its exit fails at once
    await waitStrictly(
      "apertium-apy to answer /listPairs",
      async () => {
        if (child.exitCode !== null) throw new Error(`apertium-apy exited (${child.exitCode}): ${stderr}`);
        return fetch(`${url}/listPairs`).then(
          (r) => r.ok,
          () => false, // not listening yet
        );
      },
      { timeoutMs: 60_000, intervalMs: 200, show: () => stderr },
    );
  } catch (err) {
    child.kill("SIGKILL");
    throw err;
  }
  return {
    url,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      // one that does not leave on SIGTERM within 5 s is killed
      const kill = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(kill);
    },
  };
}

/** How the engine proxy behaves: pass through, reset every connection (down), or never answer (slow). */
export type ProxyMode = "up" | "down" | "slow";

/** A controllable HTTP proxy in front of APY that counts `/translate` requests. */
export interface EngineProxy {
  url: string;
  mode: ProxyMode;
  /** `/translate` requests received (any mode). */
  translateRequests: number;
  stop(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/**
 * Starts a proxy to `upstream` (a real APY). Mode `down` destroys each connection (the engine is
 * gone), `slow` holds requests without answering (the engine hangs) until the mode changes or the
 * proxy stops. `/listPairs` always passes through so the pair list is known.
 */
export async function startEngineProxy(upstream: string): Promise<EngineProxy> {
  const held = new Set<() => void>();
  const state = { mode: "up" as ProxyMode, translateRequests: 0 };
  const proxy = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? "").split("?")[0];
    const body = await readBody(req);
    if (path === "/translate") {
      state.translateRequests++;
      if (state.mode === "down") return void req.socket.destroy();
      if (state.mode === "slow") {
        await new Promise<void>((r) => held.add(r));
        return void req.socket.destroy();
      }
    }
    try {
      const r = await fetch(upstream + req.url, {
        method: req.method,
        headers: { "content-type": req.headers["content-type"] ?? "text/plain" },
        body: req.method === "GET" ? undefined : body.toString("utf8"),
      });
      res
        .writeHead(r.status, { "content-type": r.headers.get("content-type") ?? "application/json" })
        .end(Buffer.from(await r.arrayBuffer()));
    } catch {
      req.socket.destroy();
    }
  };
  // a failure before the answer (reading the request) resets the connection, like the engine would
  const server: Server = createServer((req, res) => void proxy(req, res).catch(() => req.socket.destroy()));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    get mode() {
      return state.mode;
    },
    set mode(m: ProxyMode) {
      state.mode = m;
      if (m !== "slow") for (const release of held) release();
      if (m !== "slow") held.clear();
    },
    get translateRequests() {
      return state.translateRequests;
    },
    stop: async () => {
      for (const release of held) release();
      held.clear();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
