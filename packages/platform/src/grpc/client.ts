import { credentials, Metadata, status as GrpcStatus, type ServiceError } from "@grpc/grpc-js";
import { CODE_METADATA_KEY, fromServiceError } from "../errors.js";
import type { Channel, RequestOf, ResponseOf, ServiceDefinitionLike, UnaryMethod } from "./channel.js";
import { LIMITS } from "../limits.js";

/**
 * Default deadline of every service-to-service call, ms (10 s: a burst of writes may queue for a
 * pool connection; docs/design/services.md#typed-clients). A process sets its own with `GRPC_DEADLINE_MS` (commonEnvSchema),
 * which its clients' connections carry (setChannelDeadline).
 */
export const DEFAULT_DEADLINE_MS = 10_000;

/** The deadline a connection's calls get when the call names none, ms, by channel (connect.ts). */
const channelDeadlines = new WeakMap<object, number>();

/**
 * Gives the calls made over `channel` (a grpc-js client, or an in-process endpoint's methods) a
 * deadline of `ms` when the call names none, instead of DEFAULT_DEADLINE_MS: the process's
 * `GRPC_DEADLINE_MS`. In the all-in-one every service shares one in-process endpoint per service
 * and one config, so the last setting is everyone's.
 */
export function setChannelDeadline(channel: object, ms: number): void {
  channelDeadlines.set(channel, ms);
}

/** The deadline of a call over `channel` that names none, ms (setChannelDeadline, else DEFAULT_DEADLINE_MS). */
export function channelDeadline(channel: object): number {
  return channelDeadlines.get(channel) ?? DEFAULT_DEADLINE_MS;
}

/**
 * Calls one unary method of `client` (a grpc-js client or an in-process endpoint's methods, see
 * connect.ts) with a deadline (`deadlineMs`, default 10 000 ms) and turns failures into
 * ApsError (stable code preserved; connection failures → `upstream_unavailable`).
 */
export function callUnary<Req, Res>(
  client: object,
  method: UnaryMethod<Req, Res>,
  req: Req,
  deadlineMs = DEFAULT_DEADLINE_MS,
): Promise<Res> {
  return new Promise((resolve, reject) => {
    method.call(client, req, new Metadata(), { deadline: Date.now() + deadlineMs }, (err, res) =>
      err ? reject(fromServiceError(err)) : resolve(res),
    );
  });
}

/** Pauses before the retries of a read, ms (a restarting or re-connecting service). */
export const READ_RETRY_DELAYS_MS = [250, 1_000];

/**
 * Like callUnary, for idempotent calls only (reads: nothing changes however often it runs):
 * a transport failure — UNAVAILABLE without an APS code, i.e. the service was not reached — is
 * retried after 250 ms and 1 s (past the channel's first reconnect backoff, 500 ms) while the deadline (`deadlineMs`, for all attempts) allows.
 * Anything the service itself answered, and every write, is never retried here.
 */
export async function callRead<Req, Res>(
  client: object,
  method: UnaryMethod<Req, Res>,
  req: Req,
  deadlineMs = DEFAULT_DEADLINE_MS,
): Promise<Res> {
  const deadline = Date.now() + deadlineMs;
  for (let attempt = 0; ; attempt++) {
    const left = deadline - Date.now();
    try {
      return await new Promise<Res>((resolve, reject) => {
        method.call(client, req, new Metadata(), { deadline: Date.now() + left }, (err, res) =>
          err ? reject(err) : resolve(res),
        );
      });
    } catch (err) {
      const se = err as Partial<ServiceError>;
      const transport = se.code === GrpcStatus.UNAVAILABLE && se.metadata?.get(CODE_METADATA_KEY)[0] === undefined;
      const pause = READ_RETRY_DELAYS_MS[attempt];
      if (!transport || pause === undefined || Date.now() + pause >= deadline) throw fromServiceError(err);
      await new Promise((r) => setTimeout(r, pause));
    }
  }
}

/** True when `req` is a keyed write: a non-empty `idempotencyKey` field (docs/design/edge.md#idempotency-key). */
function hasIdempotencyKey(req: unknown): boolean {
  const key: unknown = (req as { idempotencyKey?: unknown } | null)?.idempotencyKey;
  return typeof key === "string" && key !== "";
}

/** Idempotency levels (google/protobuf/descriptor.proto, MethodOptions) whose methods may run twice. */
const RETRIABLE_LEVELS = new Set(["NO_SIDE_EFFECTS", "IDEMPOTENT"]);

/**
 * True when the .proto declares `option idempotency_level = NO_SIDE_EFFECTS` (or `IDEMPOTENT`)
 * on `method`: running it again changes nothing, so a call that never reached the service may be
 * sent again (docs/design/services.md#retries-declared-in-the-proto).
 */
export function isRetriable(method: { readonly options?: { readonly idempotencyLevel?: string } }): boolean {
  return RETRIABLE_LEVELS.has(method.options?.idempotencyLevel ?? "");
}

/**
 * Calls method `name` of service `def` over `channel` (a generated client or an in-process
 * endpoint) with a deadline (`deadlineMs`, default the channel's: channelDeadline). The retry policy comes
 * from the .proto, declared once per method: retried as callRead when isRetriable, never retried
 * (callUnary) otherwise — except a write that carries an `idempotencyKey`: its service runs it
 * at most once per key and replays the first outcome (docs/design/edge.md#idempotency-key), so it is retried like a
 * read. Rejects with ApsError like both.
 */
export function callMethod<D extends ServiceDefinitionLike, K extends keyof D["methods"] & string>(
  channel: Channel<D>,
  def: D,
  name: K,
  req: RequestOf<D["methods"][K]>,
  deadlineMs = channelDeadline(channel),
): Promise<ResponseOf<D["methods"][K]>> {
  const method = channel[name] as UnaryMethod<RequestOf<D["methods"][K]>, ResponseOf<D["methods"][K]>>;
  const definition = def.methods[name];
  if (!definition) throw new Error(`${def.fullName} has no method ${name}`);
  return isRetriable(definition) || hasIdempotencyKey(req)
    ? callRead(channel, method, req, deadlineMs)
    : callUnary(channel, method, req, deadlineMs);
}

/**
 * How often at most a client channel asks DNS again for a `dns:///` target's addresses, ms (1 s;
 * grpc-js's default is 30 s). grpc-js resolves again when a connection of the channel is lost or
 * closed by the server (GOAWAY after SERVER_OPTIONS' max connection age), so pods a scale-up adds
 * are found within a connection age and a pod that went away within this. At 30 s a channel that
 * had resolved less than 30 s before a roll of its target (a gateway pod started by the same
 * `helm upgrade`) kept only the addresses of stopped pods for the rest of the 30 s: the
 * production rehearsal saw 45 requests answered 503 over 5.8 s when identity's second old pod
 * stopped 30 s after the gateway's roll. Lookups happen only on such losses, at most one a second
 * per channel (docs/design/services.md#balancing-and-connection-age).
 */
export const DNS_MIN_RESOLUTION_MS = 1_000;

/**
 * The gRPC service config of every client channel: `round_robin` over every address the target
 * resolves to — a headless Service's pod IPs (`dns:///aps-forum:50052` in the chart) or the
 * replicas of `npm run start:distributed` (`ipv4:127.0.0.1:50052,127.0.0.1:50053`) — instead of
 * grpc-js's default `pick_first`, which sends every call of the channel to one address
 * (docs/design/services.md#balancing-and-connection-age). With one address it is one subchannel, as before.
 */
export const SERVICE_CONFIG = { loadBalancingConfig: [{ round_robin: {} }] } as const;

/**
 * Channel options of every service-to-service client: after a service restarts, a channel
 * reconnects within ≤ 5 s (grpc-js would otherwise back off up to 120 s, keeping the gateway
 * answering 503 long after the service is back). grpc-js adds ±20 % jitter to each backoff, so
 * the cap of 3.5 s spaces attempts ≤ 4.2 s apart, which leaves room under 5 s for the
 * handshake on a loaded machine (docs/design/tests.md#published-bounds; `grpc/reconnect.test.ts` measures the worst case). Message sizes are capped explicitly at
 * LIMITS.grpcMessageBytes both ways (grpc-js would receive only 4 MiB; docs/design/edge.md#lists-and-cursors). Calls are
 * spread `round_robin` over every address of the target (SERVICE_CONFIG), DNS asked again at most
 * every DNS_MIN_RESOLUTION_MS, no TXT lookups for a service config (ours is fixed here; docs/design/services.md#balancing-and-connection-age).
 * Same options everywhere, so the clients of one address (typed client + health client) share one
 * subchannel.
 */
export const CHANNEL_OPTIONS = {
  "grpc.initial_reconnect_backoff_ms": 500,
  "grpc.max_reconnect_backoff_ms": 3_500,
  "grpc.max_receive_message_length": LIMITS.grpcMessageBytes,
  "grpc.max_send_message_length": LIMITS.grpcMessageBytes,
  "grpc.service_config": JSON.stringify(SERVICE_CONFIG),
  "grpc.service_config_disable_resolution": 1,
  "grpc.dns_min_time_between_resolutions_ms": DNS_MIN_RESOLUTION_MS,
} as const;

/** Insecure channel credentials for in-cluster gRPC (see startGrpcServer). */
export const insecure = () => credentials.createInsecure();
