import { credentials } from "@grpc/grpc-js";
import { LIMITS } from "../limits.js";

/**
 * Default deadline of every service-to-service call, ms (10 s: a burst of writes may queue for a
 * pool connection; docs/design/services.md#typed-clients). A process sets its own with `GRPC_DEADLINE_MS` (commonEnvSchema),
 * which its clients carry as their default call option (connect.ts `serviceClient`).
 */
export const DEFAULT_DEADLINE_MS = 10_000;

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
