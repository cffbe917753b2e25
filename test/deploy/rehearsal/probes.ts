import { execFile } from "node:child_process";
import { request } from "node:http";
import { connect } from "node:net";
import * as grpc from "@grpc/grpc-js";

/**
 * One probe of a rendered container, run as the kubelet runs it — httpGet, grpc (grpc.health.v1),
 * tcpSocket from the node (here: the test process, which reaches the rehearsal network) and exec
 * inside the container (`docker exec`) — and the kubelet's defaults for its timing.
 */

/** A rendered probe (the fields the kubelet reads). */
export interface Probe {
  httpGet?: {
    path?: string;
    port: number | string;
    scheme?: string;
    httpHeaders?: Array<{ name: string; value: string }>;
  };
  grpc?: { port: number; service?: string };
  tcpSocket?: { port: number | string };
  exec?: { command: string[] };
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
  successThreshold?: number;
}

/** Where a probe goes: the container's address, its Docker name (for exec) and its named ports. */
export interface ProbeTarget {
  ip: string;
  containerName: string;
  ports: ReadonlyArray<{ name?: string; containerPort: number }>;
}

/** Kubernetes' defaults, in seconds / counts: period 10, timeout 1, failure 3, success 1. */
export function probeTiming(p: Probe): { periodMs: number; timeoutMs: number; failureThreshold: number } {
  return {
    periodMs: (p.periodSeconds ?? 10) * 1000,
    timeoutMs: (p.timeoutSeconds ?? 1) * 1000,
    failureThreshold: p.failureThreshold ?? 3,
  };
}

function portOf(port: number | string, t: ProbeTarget): number {
  if (typeof port === "number") return port;
  if (/^\d+$/.test(port)) return Number(port);
  const p = t.ports.find((x) => x.name === port);
  if (!p) throw new Error(`probe port ${port} is not a named port of ${t.containerName}`);
  return p.containerPort;
}

function httpProbe(h: NonNullable<Probe["httpGet"]>, t: ProbeTarget, timeoutMs: number): Promise<boolean> {
  if ((h.scheme ?? "HTTP") !== "HTTP") throw new Error(`httpGet scheme ${h.scheme} is not supported`);
  return new Promise((resolve) => {
    const headers = Object.fromEntries((h.httpHeaders ?? []).map((x) => [x.name, x.value]));
    const req = request(
      { host: t.ip, port: portOf(h.port, t), path: h.path ?? "/", agent: false, headers, timeout: timeoutMs },
      (res) => {
        res.resume();
        resolve(res.statusCode! >= 200 && res.statusCode! < 400);
      },
    );
    req.on("timeout", () => req.destroy(new Error("probe timeout")));
    req.on("error", () => resolve(false));
    req.end();
  });
}

/** grpc.health.v1.HealthCheckRequest { service } in protobuf, and SERVING (1) read from the answer. */
function grpcProbe(g: NonNullable<Probe["grpc"]>, t: ProbeTarget, timeoutMs: number): Promise<boolean> {
  const service = Buffer.from(g.service ?? "", "utf8");
  const body = service.length > 0 ? Buffer.concat([Buffer.from([0x0a, service.length]), service]) : Buffer.alloc(0);
  const client = new grpc.Client(`${t.ip}:${g.port}`, grpc.credentials.createInsecure());
  return new Promise<boolean>((resolve) => {
    client.makeUnaryRequest(
      "/grpc.health.v1.Health/Check",
      (b: Buffer) => b,
      (b: Buffer) => b,
      body,
      { deadline: Date.now() + timeoutMs },
      (err, res) => resolve(!err && res !== undefined && res.length >= 2 && res[0] === 0x08 && res[1] === 0x01),
    );
  }).finally(() => client.close());
}

function tcpProbe(port: number, t: ProbeTarget, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: t.ip, port, timeout: timeoutMs });
    s.on("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.on("timeout", () => {
      s.destroy();
      resolve(false);
    });
    s.on("error", () => resolve(false));
  });
}

function execProbe(command: string[], t: ProbeTarget, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    execFile("docker", ["exec", t.containerName, ...command], { timeout: timeoutMs }, (err) => resolve(!err));
  });
}

/**
 * Runs `probe` once against `target`: resolves true on success (HTTP 200–399, SERVING, a TCP
 * connection, exit 0), false on failure or past `timeoutSeconds`. Throws for a probe kind or port
 * the rehearsal cannot run.
 */
export function runProbe(probe: Probe, target: ProbeTarget): Promise<boolean> {
  const { timeoutMs } = probeTiming(probe);
  if (probe.httpGet) return httpProbe(probe.httpGet, target, timeoutMs);
  if (probe.grpc) return grpcProbe(probe.grpc, target, timeoutMs);
  if (probe.tcpSocket) return tcpProbe(portOf(probe.tcpSocket.port, target), target, timeoutMs);
  if (probe.exec) return execProbe(probe.exec.command, target, timeoutMs);
  throw new Error(`probe of ${target.containerName} has no handler the rehearsal knows`);
}
