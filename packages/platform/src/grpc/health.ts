import { makeGenericClientConstructor, Metadata, type ChannelOptions, type Client } from "@grpc/grpc-js";
import { service as healthService, type HealthImplementation } from "grpc-health-check";
import { CHANNEL_OPTIONS, insecure } from "./client.js";
import type { Logger } from "../log.js";

/** How often a service re-checks its dependencies by default, ms (docs/design/operations.md#at-a-glance readiness). */
export const DEFAULT_PROBE_INTERVAL_MS = 1_000;
/**
 * A probe slower than this counts as failed, ms (a hung PostgreSQL is as bad as a stopped one;
 * long enough that a pool queue under load is not taken for an outage — pg's connect timeout is 5 s).
 */
export const DEFAULT_PROBE_TIMEOUT_MS = 5_000;

/** A cheap check of what a service needs to answer (its database); rejects when unavailable. */
export type DependencyProbe = () => Promise<unknown>;

/** A running dependency watcher. */
export interface DependencyWatch {
  /** True after the last probe succeeded (also true before the first probe ends). */
  readonly healthy: boolean;
  /** Stops probing (the health status is left as it is; shutdown sets NOT_SERVING itself). */
  stop(): Promise<void>;
}

/**
 * Runs `probe` every `intervalMs` (default 1 000 ms; a probe taking longer than `timeoutMs`,
 * default 5 000 ms, fails) and mirrors the result on the gRPC health service: every name in
 * `names` becomes NOT_SERVING after a failed probe and SERVING again after a successful one.
 * This is what makes the gateway's `/readyz` answer 503 while a service's PostgreSQL is down
 * (docs/design/operations.md#health-and-readiness). Transitions are logged once.
 */
export function watchDependency(
  health: HealthImplementation,
  names: string[],
  probe: DependencyProbe,
  log: Logger,
  opts: { intervalMs?: number | undefined; timeoutMs?: number | undefined } = {},
): DependencyWatch {
  let healthy = true;
  let stopped = false;
  let inFlight: Promise<void> = Promise.resolve();
  const timeoutMs = opts.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  const once = async () => {
    let timer: NodeJS.Timeout | undefined;
    const ok = await Promise.race([
      probe().then(
        () => true,
        () => false,
      ),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (stopped || ok === healthy) return;
    healthy = ok;
    for (const n of names) health.setStatus(n, ok ? "SERVING" : "NOT_SERVING");
    if (ok) log.info("dependency probe succeeds again: SERVING");
    else log.warn("dependency probe failed (database unreachable?): NOT_SERVING");
  };
  let busy = false;
  const timer = setInterval(() => {
    if (busy || stopped) return;
    busy = true;
    inFlight = once().finally(() => (busy = false));
  }, opts.intervalMs ?? DEFAULT_PROBE_INTERVAL_MS);
  timer.unref();
  return {
    get healthy() {
      return healthy;
    },
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await inFlight;
    },
  };
}

/** Serving status answered by `grpc.health.v1.Health/Check`, or `UNREACHABLE` when the call failed. */
export type HealthStatus = "SERVING" | "NOT_SERVING" | "UNKNOWN" | "SERVICE_UNKNOWN" | "UNREACHABLE";

type CheckMethod = (
  req: { service: string },
  md: Metadata,
  opts: { deadline: number },
  cb: (err: Error | null, res?: { status?: string }) => void,
) => void;
const HealthClientCtor = makeGenericClientConstructor(healthService, "Health");

/**
 * Client of the standard gRPC health-checking protocol of one service address (`host:port`).
 * The gateway's `/readyz` asks each service whether it is SERVING (reachable AND its own
 * dependencies up), not merely whether a TCP channel opens.
 */
export class HealthClient {
  private readonly c: Client & { Check: CheckMethod };

  /**
   * @param addr `host:port` of a service's gRPC server.
   * @param options channel options over CHANNEL_OPTIONS; e.g. `grpc.use_local_subchannel_pool: 1`
   *   for a channel of its own, not the process-wide subchannel of `addr` (whose reconnect backoff
   *   an earlier failure set): a test waiting for a service to come up checks it at once.
   */
  constructor(addr: string, options: ChannelOptions = {}) {
    this.c = new HealthClientCtor(addr, insecure(), { ...CHANNEL_OPTIONS, ...options }) as unknown as Client & {
      Check: CheckMethod;
    };
  }

  /** Status of `service` ("" = the whole server) within `ms` (deadline); never rejects. */
  check(ms: number, service = ""): Promise<HealthStatus> {
    return new Promise((resolve) => {
      this.c.Check({ service }, new Metadata(), { deadline: Date.now() + ms }, (err, res) => {
        if (err) resolve("UNREACHABLE");
        else resolve((res?.status as HealthStatus | undefined) ?? "UNKNOWN");
      });
    });
  }

  /** True when the service answers SERVING within `ms`. */
  async serving(ms: number): Promise<boolean> {
    return (await this.check(ms)) === "SERVING";
  }

  close(): void {
    this.c.close();
  }
}
