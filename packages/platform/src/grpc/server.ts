import {
  Server,
  ServerCredentials,
  type ServiceDefinition,
  type UntypedServiceImplementation,
  type handleUnaryCall,
  type ServerUnaryCall,
} from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import { ApsError, isDatabaseUnavailable, toServiceError } from "../errors.js";
import { DRY_RUN_METADATA_KEY, runAsDryRun } from "../db/dry-run.js";
import type { Logger } from "../log.js";
import { LIMITS } from "../limits.js";
import { grpcDuration, grpcHandled } from "../metrics.js";
import { watchDependency, type DependencyProbe } from "./health.js";
import type { ServiceDefinitionLike } from "./channel.js";
import { LocalGate, localEndpoint, type Implementation, type LocalEndpoint } from "./local.js";
import { guardImplementation, type CallerVerifier } from "./caller-check.js";
import { releaseListenPort } from "./port-reservation.js";

/** One gRPC service to serve: its generated definition, implementation and full name for health. */
export interface ServedService {
  /** Fully qualified name, e.g. `aps.forum.v1.ForumService` (the health-check service key). */
  name: string;
  definition: ServiceDefinition;
  implementation: UntypedServiceImplementation;
}

/** A started gRPC server. */
export interface RunningGrpcServer {
  /** Bound port (useful when asked for port 0). */
  port: number;
  /** The health service; set NOT_SERVING before draining. */
  health: HealthImplementation;
  /**
   * An in-process endpoint of one of the served services (its generic definition and the same
   * `implementation`), sharing this server's lifecycle: refused once shutdown begins, waited for
   * by shutdown, SERVING as the health entry "" is (docs/design/services.md#in-process-transport).
   */
  local<D extends ServiceDefinitionLike>(definition: D, implementation: Implementation<D>): LocalEndpoint<D>;
  /**
   * Marks NOT_SERVING and refuses new calls (gRPC and in-process), lets in-flight calls finish
   * (up to `graceMs`, default 10 000 ms), then stops.
   */
  shutdown(graceMs?: number): Promise<void>;
}

/**
 * Health-check service name answered SERVING while the process is up, whatever its dependencies
 * (the Kubernetes liveness probe asks for it; readiness asks for "" which follows the probe).
 */
export const LIVENESS_SERVICE = "liveness";

/** Optional behaviour of `startGrpcServer`. */
export interface GrpcServerOptions {
  /**
   * Readiness probe (e.g. `SELECT 1` on the service's pool): run every `probeIntervalMs`
   * (default 1 000 ms); while it fails every health entry is NOT_SERVING (see watchDependency).
   */
  probe?: DependencyProbe | undefined;
  probeIntervalMs?: number;
  /**
   * The callers this server accepts (docs/design/services.md#caller-policy-and-internal-trust): when set, every call over
   * the network must carry a declared caller's token (caller-check.ts); unset = no check (the
   * all-in-one on loopback). The health service and the in-process endpoints are never checked.
   */
  callers?: CallerVerifier | undefined;
  /**
   * Longest a client connection lives, ms (default SERVER_CONNECTION_AGE.maxAgeMs); then the server
   * sends GOAWAY and the client reconnects — resolving its target again, so it finds replicas a
   * scale-up added (docs/design/services.md#balancing-and-connection-age). `GRPC_MAX_CONNECTION_AGE_MS` of every service.
   */
  maxConnectionAgeMs?: number | undefined;
  /** How long calls still running on a connection past its age may finish, ms (default SERVER_CONNECTION_AGE.graceMs; `GRPC_MAX_CONNECTION_AGE_GRACE_MS`). */
  maxConnectionAgeGraceMs?: number | undefined;
}

/**
 * Default connection age of every gRPC server (docs/design/services.md#balancing-and-connection-age): a client's
 * connection is closed (GOAWAY) after 5 minutes, so after a scale-up every client has spread its
 * calls over the new replicas within 5 minutes; calls running then get 15 s more (past
 * DEFAULT_DEADLINE_MS, 10 s) before the connection is cut. grpc-js adds ±10 % jitter to the age.
 */
export const SERVER_CONNECTION_AGE = { maxAgeMs: 300_000, graceMs: 15_000 } as const;

/**
 * Starts a gRPC server on `addr` (`host:port`, port 0 = any) serving `services` plus the standard
 * gRPC health-checking protocol (`grpc.health.v1.Health`), all SERVING — or NOT_SERVING while
 * `opts.probe` fails. Plaintext transport inside the cluster network; each call's caller is checked
 * against `opts.callers` when given (docs/design/services.md#caller-policy-and-internal-trust). A port the process held
 * since its start (`reserveListenPort`, docs/design/services.md#port-reservation) is released just before the bind.
 * Rejects when the bind fails (grpc-js: "No address added …", with the errors).
 */
export async function startGrpcServer(
  addr: string,
  services: ServedService[],
  log: Logger,
  opts: GrpcServerOptions = {},
): Promise<RunningGrpcServer> {
  // Message sizes explicit both ways, the same as the clients' (LIMITS.grpcMessageBytes, docs/design/edge.md#lists-and-cursors);
  // connections closed after their age so clients rebalance over new replicas (docs/design/services.md#balancing-and-connection-age).
  const server = new Server({
    "grpc.max_receive_message_length": LIMITS.grpcMessageBytes,
    "grpc.max_send_message_length": LIMITS.grpcMessageBytes,
    "grpc.max_connection_age_ms": opts.maxConnectionAgeMs ?? SERVER_CONNECTION_AGE.maxAgeMs,
    "grpc.max_connection_age_grace_ms": opts.maxConnectionAgeGraceMs ?? SERVER_CONNECTION_AGE.graceMs,
  });
  const statuses: Record<string, "SERVING"> = { "": "SERVING" };
  for (const s of services) {
    server.addService(
      s.definition,
      opts.callers ? guardImplementation(s.name, s.implementation, opts.callers) : s.implementation,
    );
    statuses[s.name] = "SERVING";
  }
  const health = new HealthImplementation(statuses);
  health.addToServer(server);
  // a port held since the process started (docs/design/services.md#port-reservation) is let go just before the bind
  await releaseListenPort(addr);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(addr, ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  // Liveness stays SERVING through a database outage (restarting the pod would not help);
  // "" and the named services are readiness (docs/design/operations.md#health-and-readiness).
  health.setStatus(LIVENESS_SERVICE, "SERVING");
  const watch = opts.probe
    ? watchDependency(health, Object.keys(statuses), opts.probe, log, { intervalMs: opts.probeIntervalMs })
    : undefined;
  const gate = new LocalGate(() => watch?.healthy ?? true);
  log.info({ addr, port, callerCheck: opts.callers !== undefined }, "gRPC server listening");
  if (!opts.callers && !/^(127\.|\[::1\]|localhost)/.test(addr))
    log.warn(
      { addr },
      "gRPC caller check off (no APS_PEER_DIGESTS) on a non-loopback address (docs/design/services.md#caller-policy-and-internal-trust)",
    );
  return {
    port,
    health,
    local: (definition, implementation) => localEndpoint(definition, implementation, gate),
    shutdown: async (graceMs = 10_000) => {
      const localDrained = gate.close(graceMs);
      await watch?.stop();
      for (const name of [...Object.keys(statuses), LIVENESS_SERVICE]) health.setStatus(name, "NOT_SERVING");
      const grpcDrained = new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(t);
          resolve();
        });
      });
      await Promise.all([localDrained, grpcDrained]);
    },
  };
}

/**
 * Logs a handler's failure that is not an answer of its own (not an ApsError): a database outage
 * as one warn line without a stack (answered 503, readiness already NOT_SERVING), anything else as
 * an error with its stack. `method`: the gRPC path (`/aps.forum.v1.ForumService/CastVote`).
 */
export function logHandlerFault(log: Logger, err: unknown, method: string): void {
  if (err instanceof ApsError) return;
  if (isDatabaseUnavailable(err))
    log.warn({ err: err instanceof Error ? err.message : String(err), method }, "database unavailable");
  else
    log.error(
      { err: err instanceof Error ? { message: err.message, stack: err.stack } : String(err), method },
      "unhandled error in gRPC handler",
    );
}

/**
 * Adapts an async handler to grpc-js's callback style. An ApsError becomes its gRPC status with
 * the stable code in metadata; anything else is logged and answered as INTERNAL without detail.
 * Counts every call in `aps_grpc_server_handled_total` / `aps_grpc_server_handling_seconds`.
 * A call whose metadata holds `aps-dry-run: 1` runs as a dry run: whatever it wrote is rolled
 * back once it has answered (docs/design/edge.md#dry-run).
 */
export function unary<Req, Res>(
  log: Logger,
  fn: (req: Req, call: ServerUnaryCall<Req, Res>) => Promise<Res>,
): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const started = process.hrtime.bigint();
    const observe = (code: number) => {
      const labels = { method: call.getPath(), code: String(code) };
      grpcHandled.inc(labels);
      grpcDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    };
    const dryRun = call.metadata?.get(DRY_RUN_METADATA_KEY)[0] === "1";
    (dryRun ? runAsDryRun(() => fn(call.request, call)) : fn(call.request, call)).then(
      (res) => {
        observe(0);
        callback(null, res);
      },
      (err: unknown) => {
        logHandlerFault(log, err, call.getPath());
        const se = toServiceError(err);
        observe(Number((se as { code?: number }).code ?? 2));
        callback(se);
      },
    );
  };
}
