import { createClientFactory, type Client } from "nice-grpc";
import type { council, forum, identity, knowledge, notifications, translation } from "@aps/proto";
import type { ServiceDefinition } from "./channel.js";
import { CHANNEL_OPTIONS, DEFAULT_DEADLINE_MS, insecure } from "./client.js";
import { HealthClient } from "./health.js";
import type { CallerIdentity } from "./caller-auth.js";
import { localClient, type LocalEndpoint } from "./local.js";
import {
  callerMiddleware,
  CLIENT_MIDDLEWARE,
  composeMiddleware,
  DeadlineChannel,
  grpcTransportMiddleware,
  type ApsCallOptions,
} from "./middleware.js";

/**
 * Where a typed client sends its calls: a gRPC target — `host:port`, `dns:///host:port`,
 * `ipv4:a:p,b:p` (distributed mode, a second gateway) — or the in-process endpoint of a service
 * started in this process (the all-in-one; docs/design/services.md#in-process-transport).
 */
export type ServiceTarget<D extends ServiceDefinition> = string | LocalEndpoint<D>;

/** The connection under a typed client: its readiness and its end. */
export interface ServiceConnection {
  /**
   * True when the service is SERVING: over gRPC, its health check answers so within `ms`;
   * in-process, its health state now (not draining, dependency probe passing;
   * docs/design/operations.md#health-and-readiness). Never rejects.
   */
  ready(ms: number): Promise<boolean>;
  /** Closes the gRPC channels (the service's and its health client's); nothing to close in-process. */
  close(): void;
}

/**
 * A typed client of service `D` (docs/design/services.md#typed-clients): one method per RPC,
 * keyed like the definition (`getPost`, `castVote`, …), taking the request as an object whose
 * absent fields get their proto3 defaults (ts-proto `DeepPartial`) and optional ApsCallOptions
 * (`deadline`, ms), resolving with the response message and rejecting with ApsError; plus
 * `ready(ms)` and `close()`.
 */
export type ServiceClient<D extends ServiceDefinition> = Client<D, ApsCallOptions> & ServiceConnection;

/** Typed client of the identity service. */
export type IdentityClient = ServiceClient<typeof identity.IdentityServiceDefinition>;
/** Typed client of the forum service (the gateway's votes go through VoteBatcher, packages/api). */
export type ForumClient = ServiceClient<typeof forum.ForumServiceDefinition>;
/** Typed client of the council service. */
export type CouncilClient = ServiceClient<typeof council.CouncilServiceDefinition>;
/** Typed client of the knowledge service. */
export type KnowledgeClient = ServiceClient<typeof knowledge.KnowledgeServiceDefinition>;
/** Typed client of the translation service. */
export type TranslationClient = ServiceClient<typeof translation.TranslationServiceDefinition>;
/** Typed client of the notifications service. */
export type NotificationsClient = ServiceClient<typeof notifications.NotificationsServiceDefinition>;

/** How a typed client is made: who calls, and the deadlines of calls that name none. */
export interface ServiceClientOptions<D extends ServiceDefinition> {
  /** Who this process is, sent with every gRPC call (docs/design/services.md#caller-policy-and-internal-trust); none in-process. */
  caller?: CallerIdentity | undefined;
  /** Deadline of a call that names none, ms: the process's `GRPC_DEADLINE_MS` (default DEFAULT_DEADLINE_MS, 10 s). */
  deadlineMs?: number | undefined;
  /** Deadlines of given methods that name none, ms, over `deadlineMs` (e.g. translation's generating calls). */
  methodDeadlinesMs?: { readonly [K in keyof D["methods"]]?: number } | undefined;
}

/**
 * The one factory of typed clients (docs/design/services.md#typed-clients): a nice-grpc client of
 * `definition` over `target`, every call going through CLIENT_MIDDLEWARE — a deadline of
 * `deadlineMs` covering every attempt, retries as the .proto declares
 * (docs/design/services.md#retries-declared-in-the-proto), errors as ApsError. A gRPC target gets
 * a grpc-js channel with CHANNEL_OPTIONS (round_robin, reconnect backoff, message sizes, DNS
 * resolution; insecure in-cluster transport), the caller's identity on every call and a health
 * client for `ready`; a local endpoint is called directly (localClient).
 */
export function serviceClient<D extends ServiceDefinition>(
  definition: D,
  target: ServiceTarget<D>,
  options: ServiceClientOptions<D> = {},
): ServiceClient<D> {
  const defaults: Record<string, ApsCallOptions> = { "*": { deadline: options.deadlineMs ?? DEFAULT_DEADLINE_MS } };
  for (const [method, ms] of Object.entries(options.methodDeadlinesMs ?? {}))
    if (typeof ms === "number") defaults[method] = { deadline: ms };
  if (typeof target !== "string") {
    const client = localClient(target, CLIENT_MIDDLEWARE, defaults);
    return Object.assign(client, { ready: async () => target.serving(), close: () => undefined });
  }
  const channel = new DeadlineChannel(target, insecure(), CHANNEL_OPTIONS);
  const transport = options.caller
    ? [callerMiddleware(options.caller), grpcTransportMiddleware]
    : [grpcTransportMiddleware];
  const client = createClientFactory()
    .use(composeMiddleware([...CLIENT_MIDDLEWARE, ...transport]))
    .create(definition, channel, defaults) as Client<D, ApsCallOptions>;
  const health = new HealthClient(target);
  return Object.assign(client, {
    ready: (ms: number) => health.serving(ms),
    close: () => {
      channel.close();
      health.close();
    },
  });
}
