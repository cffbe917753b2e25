import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import {
  entryPoint,
  generateTrustEnv,
  grpcAddrEnv,
  HealthClient,
  listenAddrEnv,
  SERVICES as SPECS,
  type ServiceName,
} from "@aps/platform";
import { freePort } from "@aps/testkit";
import { ROOT } from "../support/system.js";
import { waitStrictly } from "../support/wait.js";
import { ADMIN_TOKEN, FAULT_BUS, FAULT_LIMITS } from "./support.js";

export type { ServiceName };
/** The gRPC services of the distributed topology, in start order: the one service list (docs/design/services.md#the-service-list). */
const SERVICES: ServiceName[] = SPECS.map((s) => s.name);

/** One child of the topology that a test may kill and start again on the same port. */
export interface Child {
  readonly name: ServiceName | "gateway";
  readonly addr: string;
  /** Sends `signal` (SIGKILL: a crash) and waits for the exit; resolves the exit code. */
  kill(signal?: NodeJS.Signals): Promise<number | null>;
  /** Starts the process again with the same env and port; resolves when it is healthy. */
  start(): Promise<void>;
  output(): string;
}

/**
 * The distributed topology of deploy/local/start.mjs (one process per service, gRPC between
 * them, real PostgreSQL + NATS from `env`), spawned child by child so a fault test can kill and
 * restart any one of them. A service counts as started when its gRPC health check answers
 * SERVING; the gateway when `/healthz` answers.
 */
export async function startTopology(
  env: Record<string, string>,
  options: {
    /** Extra env of one child (e.g. its own `METRICS_PORT`), applied over `env`. */
    childEnv?: (name: ServiceName | "gateway") => Record<string, string>;
  } = {},
): Promise<{ baseUrl: string; children: Record<ServiceName | "gateway", Child>; stop(): Promise<void> }> {
  const ports = Object.fromEntries(
    await Promise.all([...SERVICES, "gateway"].map(async (s) => [s, await freePort()] as const)),
  ) as Record<ServiceName | "gateway", number>;
  const addrs = Object.fromEntries(SERVICES.map((s) => [grpcAddrEnv(s), `127.0.0.1:${ports[s]}`]));
  const base = {
    ...process.env,
    APS_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: "warn",
    ...FAULT_LIMITS,
    ...FAULT_BUS,
    ...env,
    ...addrs,
  };
  // Every process calls and is called with its own token, as deploy/local/start.mjs runs them (docs/design/services.md#caller-policy-and-internal-trust).
  const trust = generateTrustEnv([...SERVICES, "gateway"]);
  const make = (name: ServiceName | "gateway"): Child => {
    const addr = `127.0.0.1:${ports[name]}`;
    const childEnv = {
      ...(name === "gateway"
        ? { ...base, ...trust.gateway, PORT: String(ports.gateway), HOST: "127.0.0.1" }
        : { ...base, ...trust[name], [listenAddrEnv(name)]: addr }),
      ...options.childEnv?.(name),
    };
    let child: ChildProcess | undefined;
    let out = "";
    const started = async () => {
      const health = name === "gateway" ? undefined : new HealthClient(addr);
      try {
        // until it serves (≤ 120 s, stretched on a loaded machine); its exit ends the wait at once
        await waitStrictly(
          `${name} to serve`,
          async () => {
            if (child?.exitCode !== null && child?.exitCode !== undefined)
              throw new Error(`${name} exited (${child.exitCode}):\n${out.slice(-3000)}`);
            return health
              ? await health.serving(500)
              : await fetch(`http://${addr}/healthz`).then(
                  (r) => r.ok,
                  () => false,
                );
          },
          { timeoutMs: 120_000, intervalMs: 100, show: () => out.slice(-3000) },
        );
      } finally {
        health?.close();
      }
    };
    return {
      name,
      addr,
      output: () => out,
      start: async () => {
        child = spawn(process.execPath, [join(ROOT, entryPoint(name))], {
          cwd: ROOT,
          env: childEnv,
          stdio: ["ignore", "pipe", "pipe"],
        });
        child.stdout?.on("data", (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
        child.stderr?.on("data", (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
        await started();
      },
      kill: async (signal = "SIGTERM") => {
        const c = child;
        if (!c || c.exitCode !== null) return c?.exitCode ?? null;
        const exited = new Promise<number | null>((r) => c.once("exit", (code) => r(code)));
        c.kill(signal);
        return exited;
      },
    };
  };
  const children = Object.fromEntries([...SERVICES, "gateway" as const].map((n) => [n, make(n)])) as Record<
    ServiceName | "gateway",
    Child
  >;
  // start order of the gRPC dependencies (the service list's order), then the gateway
  for (const n of [...SERVICES, "gateway" as const]) await children[n].start();
  return {
    baseUrl: `http://127.0.0.1:${ports.gateway}/v1`,
    children,
    stop: async () => {
      for (const n of ["gateway", "notifications", "council", "identity", "translation", "knowledge", "forum"] as const)
        await children[n].kill("SIGTERM");
    },
  };
}
