#!/usr/bin/env node
// The local multi-process topology (docs/architecture.md §3 "Distributed"): every service in its own
// process, gRPC between them, real PostgreSQL and NATS JetStream from DATABASE_URL / NATS_URL.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test NATS_URL=nats://127.0.0.1:4222 \
//     npm run start:distributed
//
// Service ports: IDENTITY_PORT (default 50051), FORUM_PORT (50052), COUNCIL_PORT (50053), KNOWLEDGE_PORT (50054), TRANSLATION_PORT (50055), gateway
// PORT (8080); 0 picks
// free ports. Prints "APS ready at <base url>" once the gateway's /readyz answers 200.
// SIGTERM/SIGINT stop every child gracefully (the gateway first, then the services).
import { spawn } from "node:child_process";
import net from "node:net";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const env = process.env;
for (const v of ["DATABASE_URL", "NATS_URL"]) {
  if (!env[v]) {
    console.error(`deploy/local/start.mjs: ${v} is required (the distributed mode runs on real PostgreSQL and NATS)`);
    process.exit(2);
  }
}

/** A free TCP port on loopback (for port 0). */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}
const pick = async (v, def) => (v === undefined || v === "" ? def : Number(v) === 0 ? freePort() : Number(v));

const identityPort = await pick(env.IDENTITY_PORT, 50051);
const forumPort = await pick(env.FORUM_PORT, 50052);
const councilPort = await pick(env.COUNCIL_PORT, 50053);
const knowledgePort = await pick(env.KNOWLEDGE_PORT, 50054);
const translationPort = await pick(env.TRANSLATION_PORT, 50055);
const gatewayPort = await pick(env.PORT, 8080);

const children = [];
function run(name, script, extra) {
  const child = spawn(process.execPath, [script], {
    cwd: root,
    env: { ...env, ...extra },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.on("data", (d) => process.stdout.write(d));
  child.stderr.on("data", (d) => process.stderr.write(d));
  child.on("exit", (code, signal) => {
    if (!stopping) {
      console.error(`${name} exited (${code ?? signal}); stopping the topology`);
      stop(1);
    }
  });
  children.push({ name, child });
  return child;
}

let stopping = false;
async function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const { child } of [...children].reverse()) {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
  }
  process.exit(code);
}
process.on("SIGTERM", () => stop(0));
process.on("SIGINT", () => stop(0));

const addrs = {
  IDENTITY_GRPC_ADDR: `127.0.0.1:${identityPort}`,
  FORUM_GRPC_ADDR: `127.0.0.1:${forumPort}`,
  COUNCIL_GRPC_ADDR: `127.0.0.1:${councilPort}`,
  KNOWLEDGE_GRPC_ADDR: `127.0.0.1:${knowledgePort}`,
  TRANSLATION_GRPC_ADDR: `127.0.0.1:${translationPort}`,
};
run("forum", "services/forum/dist/main.js", { ...addrs, FORUM_LISTEN_ADDR: addrs.FORUM_GRPC_ADDR });
run("knowledge", "services/knowledge/dist/main.js", { ...addrs, KNOWLEDGE_LISTEN_ADDR: addrs.KNOWLEDGE_GRPC_ADDR });
run("translation", "services/translation/dist/main.js", {
  ...addrs,
  TRANSLATION_LISTEN_ADDR: addrs.TRANSLATION_GRPC_ADDR,
});
run("identity", "services/identity/dist/main.js", { ...addrs, IDENTITY_LISTEN_ADDR: addrs.IDENTITY_GRPC_ADDR });
run("council", "services/council/dist/main.js", { ...addrs, COUNCIL_LISTEN_ADDR: addrs.COUNCIL_GRPC_ADDR });
run("gateway", "services/gateway/dist/main.js", { ...addrs, PORT: String(gatewayPort) });

const base = `http://127.0.0.1:${gatewayPort}`;
const deadline = Date.now() + Number(env.APS_READY_TIMEOUT_MS ?? 120_000);
for (;;) {
  try {
    const r = await fetch(`${base}/readyz`);
    if (r.status === 200) break;
  } catch {
    // not listening yet
  }
  if (Date.now() > deadline) {
    console.error("topology not ready in time (APS_READY_TIMEOUT_MS)");
    await stop(1);
  }
  await new Promise((r) => setTimeout(r, 200));
}
console.log(`APS ready at ${env.PUBLIC_BASE_URL ?? `http://localhost:${gatewayPort}`}/v1`);
