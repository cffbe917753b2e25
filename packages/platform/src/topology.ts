/**
 * The one list of APS's deployables (docs/design/services.md#services-and-libraries, docs/design/services.md#the-service-list).
 * Everything that starts, addresses or ships the services derives from it: the services' own
 * config defaults, the all-in-one (its address and endpoint maps are keyed by {@link ServiceName}),
 * `deploy/local/start.mjs`, the fault-test topology (`test/faults/topology.ts`) and the image
 * (`deploy/docker`). What cannot import TypeScript — the Helm chart's `components`, the Dockerfile's
 * `EXPOSE`, the README's configuration table — is compared with it by `test/ops/service-list.test.ts`.
 */

/** One gRPC service of APS. */
export interface ServiceSpec {
  /** Workspace folder under `services/` and the service's name in logs, metrics and the chart. */
  readonly name: string;
  /** Default gRPC port (listen `0.0.0.0:<port>`, dial `127.0.0.1:<port>`). */
  readonly port: number;
  /** Whether it owns a PostgreSQL schema (docs/design/services.md#services-and-libraries "Data ownership"). */
  readonly database: boolean;
  /** The services it calls over gRPC; each is started before it. */
  readonly dependsOn: readonly string[];
}

/**
 * The gRPC services in start order (each after the services it calls). The gateway is not in the
 * list: it is the HTTP edge and starts last ({@link GATEWAY}).
 */
export const SERVICES = [
  { name: "forum", port: 50052, database: true, dependsOn: [] },
  { name: "knowledge", port: 50054, database: false, dependsOn: ["forum"] },
  { name: "translation", port: 50055, database: true, dependsOn: ["forum"] },
  { name: "identity", port: 50051, database: true, dependsOn: ["forum"] },
  { name: "council", port: 50053, database: true, dependsOn: ["identity", "forum"] },
  { name: "notifications", port: 50056, database: true, dependsOn: [] },
] as const satisfies readonly ServiceSpec[];

/** The name of a gRPC service of {@link SERVICES}. */
export type ServiceName = (typeof SERVICES)[number]["name"];

/** The HTTP gateway: default port (`PORT`) and the services it calls (all of them). */
export const GATEWAY = { name: "gateway", port: 8080, database: true } as const;

/** The name of every deployable: the gRPC services and the gateway. */
export type DeployableName = ServiceName | typeof GATEWAY.name;

/** The env var a client reads for a service's address, e.g. `FORUM_GRPC_ADDR`. */
export type GrpcAddrEnv = `${Uppercase<ServiceName>}_GRPC_ADDR`;

/** The env var a service reads for its own listen address, e.g. `FORUM_LISTEN_ADDR`. */
export type ListenAddrEnv = `${Uppercase<ServiceName>}_LISTEN_ADDR`;

/** The spec of `name`; throws on a name not in {@link SERVICES}. */
export function serviceSpec(name: ServiceName): (typeof SERVICES)[number] {
  const s = SERVICES.find((x) => x.name === name);
  if (!s) throw new Error(`unknown service ${String(name)}`);
  return s;
}

/** `FORUM_GRPC_ADDR` for `forum`: where clients find the service. */
export function grpcAddrEnv(name: ServiceName): GrpcAddrEnv {
  return `${name.toUpperCase()}_GRPC_ADDR` as GrpcAddrEnv;
}

/** `FORUM_LISTEN_ADDR` for `forum`: where the service listens. */
export function listenAddrEnv(name: ServiceName): ListenAddrEnv {
  return `${name.toUpperCase()}_LISTEN_ADDR` as ListenAddrEnv;
}

/** Default listen address of a service: every interface, its default port (`0.0.0.0:50052`). */
export function defaultListenAddr(name: ServiceName): string {
  return `0.0.0.0:${serviceSpec(name).port}`;
}

/** Default dial address of a service: loopback, its default port (`127.0.0.1:50052`). */
export function defaultGrpcAddr(name: ServiceName): string {
  return `127.0.0.1:${serviceSpec(name).port}`;
}

/** Entry point of a deployable relative to the repository (and image) root: `services/<name>/dist/main.js`. */
export function entryPoint(name: DeployableName): string {
  return `services/${name}/dist/main.js`;
}
