#!/usr/bin/env node
// The local multi-process topology (docs/architecture.md §3 "Distributed"): every service in its own
// process, gRPC between them, real PostgreSQL and NATS JetStream from DATABASE_URL / NATS_URL.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test NATS_URL=nats://127.0.0.1:4222 \
//     npm run start:distributed
//
// The services, their start order and default ports come from the one service list
// (packages/platform/src/topology.ts, docs/adr/0105): <NAME>_PORT overrides a service's port
// (IDENTITY_PORT, FORUM_PORT, …), PORT the gateway's (8080); 0 picks a free port.
// Prints "APS ready at <base url>" once the gateway's /readyz answers 200.
// APS_TOPOLOGY_PLAN=1 prints the processes it would start (JSON) and exits: test/ops/service-list.test.ts.
// SIGTERM/SIGINT stop every child gracefully (the gateway first, then the services).
// Internal trust (docs/adr/0119): each process gets a random APS_INTERNAL_TOKEN per run and the
// digests of the others' (APS_PEER_DIGESTS), so every gRPC call carries and is checked for its caller.
import { spawn } from "node:child_process";
import net from "node:net";
import { fileURLToPath } from "node:url";
import { entryPoint, GATEWAY, grpcAddrEnv, listenAddrEnv, SERVICES } from "../../packages/platform/dist/topology.js";
import { generateTrustEnv } from "../../packages/platform/dist/trust-env.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const env = process.env;
for (const v of ["DATABASE_URL", "NATS_URL"]) {
  if (!env[v] && !env.APS_TOPOLOGY_PLAN) {
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
const taken = new Set();
/** The port of `v` (0 = a free one, never one already picked here: the OS may hand out a closed port again). */
async function pick(v, def) {
  if (v === undefined || v === "") return def;
  if (Number(v) !== 0) return Number(v);
  for (;;) {
    const p = await freePort();
    if (!taken.has(p)) return (taken.add(p), p);
  }
}

const ports = {};
for (const svc of SERVICES) ports[svc.name] = await pick(env[`${svc.name.toUpperCase()}_PORT`], svc.port);
const gatewayPort = await pick(env.PORT, GATEWAY.port);

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

const addrs = Object.fromEntries(SERVICES.map((svc) => [grpcAddrEnv(svc.name), `127.0.0.1:${ports[svc.name]}`]));
const plan = [
  ...SERVICES.map((svc) => ({
    name: svc.name,
    script: entryPoint(svc.name),
    env: { ...addrs, [listenAddrEnv(svc.name)]: addrs[grpcAddrEnv(svc.name)] },
  })),
  { name: GATEWAY.name, script: entryPoint(GATEWAY.name), env: { ...addrs, PORT: String(gatewayPort) } },
];
if (env.APS_TOPOLOGY_PLAN) {
  console.log(JSON.stringify(plan));
  process.exit(0);
}
const trust = generateTrustEnv(plan.map((p) => p.name));
for (const p of plan) run(p.name, p.script, { ...p.env, ...trust[p.name] });

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
