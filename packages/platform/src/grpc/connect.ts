import type { ChannelCredentials, ClientOptions } from "@grpc/grpc-js";
import type { Channel, ServiceDefinitionLike } from "./channel.js";
import { CHANNEL_OPTIONS, insecure, setChannelDeadline } from "./client.js";
import { HealthClient } from "./health.js";
import { callerInterceptor, type CallerIdentity } from "./caller-auth.js";
import type { LocalEndpoint } from "./local.js";

/**
 * Where a typed client sends its calls: a gRPC address `host:port` (distributed mode, a second
 * gateway) or the in-process endpoint of a service started in this process (the all-in-one;
 * docs/design/services.md#in-process-transport).
 */
export type ServiceTarget<D extends ServiceDefinitionLike> = string | LocalEndpoint<D>;

/** A generated grpc-js client constructor, e.g. `forum.ForumServiceClient`. */
export type GrpcClientConstructor<D extends ServiceDefinitionLike> = new (
  address: string,
  credentials: ChannelCredentials,
  options?: Partial<ClientOptions>,
) => Channel<D> & { close(): void };

/** A typed client's connection to one service, over either transport. */
export interface ServiceConnection<D extends ServiceDefinitionLike> {
  /** The service's methods (callback style), for `callUnary` / `callRead`. */
  readonly methods: Channel<D>;
  /**
   * True when the service is SERVING: over gRPC, its health check answers so within `ms`;
   * in-process, its health state now (not draining, dependency probe passing; docs/design/operations.md#health-and-readiness).
   */
  ready(ms: number): Promise<boolean>;
  /** Closes the gRPC channels; nothing to close in-process. */
  close(): void;
}

/**
 * Connects to `target`: an address gets a grpc-js client of `Client` (reconnect options
 * CHANNEL_OPTIONS, insecure in-cluster transport; with `caller`, every call carries its name and
 * token, docs/design/services.md#caller-policy-and-internal-trust) and a health client (unchecked, as the kubelet's probes
 * are); a local endpoint is used as it is. `deadlineMs`: the deadline of its calls that name none
 * (the process's `GRPC_DEADLINE_MS`; default DEFAULT_DEADLINE_MS, 10 s).
 */
export function connect<D extends ServiceDefinitionLike>(
  target: ServiceTarget<D>,
  Client: GrpcClientConstructor<D>,
  caller?: CallerIdentity,
  deadlineMs?: number,
): ServiceConnection<D> {
  if (typeof target !== "string") {
    if (deadlineMs !== undefined) setChannelDeadline(target.methods, deadlineMs);
    return { methods: target.methods, ready: async () => target.serving(), close: () => undefined };
  }
  const client = new Client(target, insecure(), {
    ...CHANNEL_OPTIONS,
    ...(caller ? { interceptors: [callerInterceptor(caller)] } : {}),
  });
  if (deadlineMs !== undefined) setChannelDeadline(client, deadlineMs);
  const health = new HealthClient(target);
  return {
    methods: client,
    ready: (ms) => health.serving(ms),
    close: () => {
      client.close();
      health.close();
    },
  };
}
