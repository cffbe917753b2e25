#!/usr/bin/env node
// The local multi-process topology (docs/design/services.md#two-ways-to-run "Distributed"): every service in its own
// process, gRPC between them, real PostgreSQL and NATS JetStream from DATABASE_URL / NATS_URL.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test NATS_URL=nats://127.0.0.1:4222 \
//     npm run start:distributed
//
// The services, their start order and default ports come from the one service list
// (packages/platform/src/topology.ts, docs/design/services.md#the-service-list): <NAME>_PORT overrides a service's port
// (IDENTITY_PORT, FORUM_PORT, …), PORT the gateway's (8080); 0 picks a free port.
// Prints "APS ready at <base url>" once the gateway's /readyz answers 200.
// APS_TOPOLOGY_PLAN=1 prints the processes it would start (JSON) and exits: test/ops/service-list.test.ts.
// SIGTERM/SIGINT stop every child gracefully (the gateway first, then the services).
// APS_NODE_ARGS passes Node flags to every process (a profile of each: `--cpu-prof --cpu-prof-dir=<dir>`).
// Internal trust (docs/design/services.md#caller-policy-and-internal-trust): each process gets a random APS_INTERNAL_TOKEN per run and the
// digests of the others' (APS_PEER_DIGESTS), so every gRPC call carries and is checked for its caller.
// Replicas (docs/design/operations.md#local-replicas): REPLICAS_<NAME>=N (REPLICAS_FORUM=2, REPLICAS_GATEWAY=2;
// default 1, at most 16) starts N processes of that deployable on consecutive ports — gateways on
// PORT, PORT+1, …; a service's from its port, the services after it (by default port) moving up
// past them; port 0 = a free port each. Every client is given all of a service's replicas
// (`ipv4:127.0.0.1:50052,127.0.0.1:50053`) and spreads its calls over them round_robin (docs/design/services.md#balancing-and-connection-age).
// Each replica of a replicated gRPC service gets a METRICS_PORT of its own; before "APS ready" a line
// `APS processes: [{name, replica, pid, port, metrics}, …]` names every process. A replica that exits
// while others of its deployable run is reported, not fatal (the topology stops when the last one goes).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
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

/** REPLICAS_<NAME> of a deployable: 1 unless set; an integer 1–16. */
function replicasOf(name) {
  const v = env[`REPLICAS_${name.toUpperCase()}`];
  if (v === undefined || v === "") return 1;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 16) {
    console.error(`deploy/local/start.mjs: REPLICAS_${name.toUpperCase()} must be an integer from 1 to 16, got ${v}`);
    process.exit(2);
  }
  return n;
}
const replicas = Object.fromEntries([...SERVICES, GATEWAY].map((d) => [d.name, replicasOf(d.name)]));
const replicated = Object.values(replicas).some((n) => n > 1);

/**
 * The ports of every deployable's replicas. A port set explicitly (`<NAME>_PORT`, `PORT`) is fixed:
 * its replicas take it and the next ones. The others are placed by default port, each range from
 * its default port or the next free one above (so with REPLICAS_FORUM=2 the forum takes 50052–50053
 * and the council, knowledge, … move up by one). Port 0 = a free port per replica.
 */
/** Whether `port` is free on loopback now. */
function isFree(port) {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });
}
/** The first port of the kernel's ephemeral range (Linux `ip_local_port_range`; 32768 elsewhere). */
function ephemeralLow() {
  try {
    return Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 32_768;
  }
}
/**
 * `n` consecutive free ports (port 0 with replicas: PORT, PORT+1, … still hold), none picked here
 * before and none given explicitly to another deployable (`used`: e.g. the gateway's PORT, free
 * now only because the gateway starts last) — below the ephemeral range, where no outbound
 * connection of this host can take one of them before its process listens (docs/design/services.md#port-reservation).
 */
async function freeRange(n) {
  const low = ephemeralLow();
  for (;;) {
    const first = 20_000 + Math.floor(Math.random() * Math.max(1, low - 20_000 - n));
    const all = range(first, n);
    if (all.every((p) => !taken.has(p) && !used.has(p)) && (await Promise.all(all.map(isFree))).every(Boolean)) {
      for (const p of all) taken.add(p);
      return all;
    }
  }
}
const ports = {};
const used = new Set();
const range = (base, n) => Array.from({ length: n }, (_, i) => base + i);
const deployables = [...SERVICES, GATEWAY].map((d) => ({
  name: d.name,
  def: d.port,
  set: env[d.name === GATEWAY.name ? "PORT" : `${d.name.toUpperCase()}_PORT`],
}));
for (const d of deployables.filter((x) => x.set !== undefined && x.set !== "" && Number(x.set) !== 0)) {
  ports[d.name] = range(Number(d.set), replicas[d.name]);
  for (const p of ports[d.name]) {
    if (used.has(p)) {
      console.error(`deploy/local/start.mjs: port ${p} of ${d.name} is taken by another deployable`);
      process.exit(2);
    }
    used.add(p);
  }
}
for (const d of deployables.filter((x) => x.set !== undefined && x.set !== "" && Number(x.set) === 0))
  ports[d.name] = await freeRange(replicas[d.name]);
for (const d of deployables.filter((x) => !(x.name in ports)).sort((a, b) => a.def - b.def)) {
  let base = d.def;
  while (range(base, replicas[d.name]).some((p) => used.has(p))) base++;
  ports[d.name] = range(base, replicas[d.name]);
  for (const p of ports[d.name]) used.add(p);
}
const gatewayPort = ports[GATEWAY.name][0];

const children = [];
/** APS_NODE_ARGS: Node flags for every process, space-separated (`--cpu-prof --cpu-prof-dir=/tmp/prof`, which NODE_OPTIONS refuses). */
const nodeArgs = (env.APS_NODE_ARGS ?? "").split(" ").filter(Boolean);
function run(p, extra) {
  const child = spawn(process.execPath, [...nodeArgs, p.script], {
    cwd: root,
    env: { ...env, ...extra },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const label = p.replica ? `${p.name}#${p.replica}` : p.name;
  child.stdout.on("data", (d) => process.stdout.write(d));
  child.stderr.on("data", (d) => process.stderr.write(d));
  child.on("exit", (code, signal) => {
    if (stopping) return;
    // Another replica of the same deployable still runs: it carries on (the clients' round_robin skips this one).
    const left = children.filter((c) => c.name === p.name && c.child.exitCode === null && c.child.signalCode === null);
    if (left.length > 0) {
      console.error(`${label} exited (${code ?? signal}); ${left.length} ${p.name} process(es) left`);
      return;
    }
    console.error(`${label} exited (${code ?? signal}); stopping the topology`);
    stop(1);
  });
  children.push({ name: p.name, child });
  return child;
}

let stopping = false;
async function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const { child } of [...children].reverse()) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
  }
  process.exit(code);
}
process.on("SIGTERM", () => stop(0));
process.on("SIGINT", () => stop(0));

/** A service's address for its clients: `127.0.0.1:<port>`, or every replica's (`ipv4:…,…`, docs/design/operations.md#local-replicas). */
const dial = (name) =>
  ports[name].length === 1
    ? `127.0.0.1:${ports[name][0]}`
    : `ipv4:${ports[name].map((p) => `127.0.0.1:${p}`).join(",")}`;
const addrs = Object.fromEntries(SERVICES.map((svc) => [grpcAddrEnv(svc.name), dial(svc.name)]));
const plan = [];
for (const svc of SERVICES)
  for (const [i, port] of ports[svc.name].entries())
    plan.push({
      name: svc.name,
      ...(replicas[svc.name] > 1 ? { replica: i + 1, METRICS_PORT: await pick("0") } : {}),
      script: entryPoint(svc.name),
      env: { ...addrs, [listenAddrEnv(svc.name)]: `127.0.0.1:${port}` },
      port,
    });
for (const [i, port] of ports[GATEWAY.name].entries())
  plan.push({
    name: GATEWAY.name,
    ...(replicas[GATEWAY.name] > 1 ? { replica: i + 1 } : {}),
    script: entryPoint(GATEWAY.name),
    env: { ...addrs, PORT: String(port) },
    port,
  });
for (const p of plan) {
  if (p.METRICS_PORT !== undefined) p.env.METRICS_PORT = String(p.METRICS_PORT);
  delete p.METRICS_PORT;
}
if (env.APS_TOPOLOGY_PLAN) {
  console.log(
    JSON.stringify(
      replicated ? plan : plan.map((p) => Object.fromEntries(Object.entries(p).filter(([k]) => k !== "port"))),
    ),
  );
  process.exit(0);
}
// One token per deployable: its replicas are the same caller (docs/design/services.md#caller-policy-and-internal-trust).
const trust = generateTrustEnv([...new Set(plan.map((p) => p.name))]);
const started = plan.map((p) => ({ p, child: run(p, { ...p.env, ...trust[p.name] }) }));

const gateways = ports[GATEWAY.name].map((p) => `http://127.0.0.1:${p}`);
const deadline = Date.now() + Number(env.APS_READY_TIMEOUT_MS ?? 120_000);
for (const base of gateways)
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
if (replicated)
  console.log(
    `APS processes: ${JSON.stringify(
      started.map(({ p, child }) => ({
        name: p.name,
        replica: p.replica ?? 1,
        pid: child.pid,
        port: p.port,
        metrics:
          p.name === GATEWAY.name
            ? `http://127.0.0.1:${p.port}/metrics`
            : p.env.METRICS_PORT
              ? `http://127.0.0.1:${p.env.METRICS_PORT}/metrics`
              : undefined,
      })),
    )}`,
  );
console.log(`APS ready at ${env.PUBLIC_BASE_URL ?? `http://localhost:${gatewayPort}`}/v1`);
