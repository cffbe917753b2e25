/**
 * APS in containers for the tests (docs/design/operations.md#the-image): the image `npm run image` builds, and PostgreSQL
 * and NATS JetStream images built from Debian's packages (`npm run image -- --infra`), run with
 * testcontainers on one Docker network.
 *
 * Which images: `APS_TEST_IMAGE` (e.g. `aps:dev`) turns the container modes on;
 * `APS_TEST_POSTGRES_IMAGE` / `APS_TEST_NATS_IMAGE` default to `aps-base/postgres:bookworm` and
 * `aps-base/nats:bookworm`. Without an engine or the images the container tests skip loudly; with
 * `APS_TEST_REQUIRE_DOCKER=1` (CI) that is a failure instead.
 *
 * testcontainers' reaper (Ryuk) is an image from Docker Hub, which is unreachable here: it is
 * turned off, and every test stops what it started (the containers are also labelled
 * `org.testcontainers=true` for a manual clean-up).
 */
import { randomBytes } from "node:crypto";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import {
  GenericContainer,
  Network,
  Wait,
  type StartedNetwork,
  type StartedTestContainer,
  type WaitStrategy,
} from "testcontainers";
import {
  entryPoint,
  GATEWAY,
  generateTrustEnv,
  grpcAddrEnv,
  HealthClient,
  listenAddrEnv,
  SERVICES,
} from "@aps/platform";
import { TEST_NATS_ACK_WAIT_MS } from "./infra.js";
import { docker, type ContainerImages } from "./images.js";
import { waitUntil } from "./wait.js";

export * from "./images.js";

/**
 * A GenericContainer with what testcontainers lacks: a read-only root file system, further
 * networks joined before the container starts (testcontainers joins one), and named volumes.
 */
class ApsGenericContainer extends GenericContainer {
  private readonly extraNetworks: { network: StartedNetwork; aliases: string[] }[] = [];

  /** Mounts the image's root file system read-only (`docker run --read-only`). */
  withReadOnlyRootFilesystem(): this {
    this.hostConfig.ReadonlyRootfs = true;
    return this;
  }

  /**
   * Joins `network` too (with `aliases`), before the container starts: its process finds it there
   * at once. An undefined network is ignored (the topology's optional NATS network).
   */
  withExtraNetworks(network: StartedNetwork | undefined, ...aliases: string[]): this {
    if (network) this.extraNetworks.push({ network, aliases });
    return this;
  }

  /** Mounts the named Docker volume `name` at `target` (`docker run -v name:target`). */
  withNamedVolume(name: string, target: string): this {
    this.hostConfig.Mounts = [...(this.hostConfig.Mounts ?? []), { Type: "volume", Source: name, Target: target }];
    return this;
  }

  /** testcontainers' hook between create and start: joins the further networks. */
  protected override async containerCreated(containerId: string): Promise<void> {
    for (const { network, aliases } of this.extraNetworks)
      await docker("network", "connect", ...aliases.flatMap((a) => ["--alias", a]), network.getName(), containerId);
  }
}

/** The last lines a container printed, kept while it starts: its start error quotes them. */
class OutputTail {
  private readonly lines: string[] = [];
  constructor(private readonly max = 40) {}

  /** For `withLogConsumer`: reads the container's output (stdout and stderr) as it comes. */
  readonly consume = (stream: Readable): void => {
    stream.on("error", () => undefined);
    createInterface({ input: stream }).on("line", (l) => {
      this.lines.push(l);
      if (this.lines.length > this.max) this.lines.shift();
    });
  };

  /** The kept lines, indented, or a note that there were none. */
  text(): string {
    return this.lines.length > 0 ? this.lines.map((l) => `    ${l}`).join("\n") : "    (no output)";
  }
}

/**
 * Readiness of one APS container, checked from the test process without `docker exec` every
 * 250 ms: `ready` resolves true, or what it saw instead (the timeout's message quotes the last).
 * Fails at its next look when the container exits or is removed, or when `abort` fires (another
 * container failed). The startup timeout is stretched by TEST_TIME_SCALE.
 */
class ApsReadyWait implements WaitStrategy {
  private startupTimeoutMs = 60_000;
  private startupTimeoutSet = false;

  constructor(
    private readonly port: number,
    private readonly ready: (hostPort: number) => Promise<true | string>,
    private readonly abort: AbortSignal,
  ) {}

  withStartupTimeout(ms: number): this {
    this.startupTimeoutMs = ms;
    this.startupTimeoutSet = true;
    return this;
  }
  isStartupTimeoutSet(): boolean {
    return this.startupTimeoutSet;
  }
  getStartupTimeout(): number {
    return this.startupTimeoutMs;
  }

  async waitUntilReady(
    container: { inspect(): Promise<{ State: { Running: boolean; Status: string; ExitCode: number } }> },
    boundPorts: { getBinding(port: number): number },
  ): Promise<void> {
    const hostPort = boundPorts.getBinding(this.port);
    // ready, or why it never will be (ends the wait at once); "not yet" is thrown: the timeout quotes the last
    const outcome = await waitUntil(
      "the container to be ready",
      async (): Promise<{ failed?: string }> => {
        if (this.abort.aborted) return { failed: String(this.abort.reason) };
        const state = await container.inspect().then(
          (i) => i.State,
          () => undefined,
        );
        if (!state) return { failed: "the container is gone" };
        if (!state.Running)
          return { failed: `the container ${state.Status} (exit code ${state.ExitCode}) before it was ready` };
        const r = await this.ready(hostPort);
        if (r === true) return {};
        throw new Error(`not ready; last: ${r}`);
      },
      { timeoutMs: this.startupTimeoutMs, intervalMs: 250 },
    );
    if (outcome.failed !== undefined) throw new Error(outcome.failed);
  }
}

/**
 * A gRPC service's own readiness: its health check answers SERVING on the published port (the
 * server is bound after its migrations, and its database probe passes: docs/design/operations.md#health-and-readiness). A channel
 * of its own each time: one that failed once would wait out its reconnect backoff (up to 3.5 s).
 */
async function grpcServing(hostPort: number): Promise<true | string> {
  const health = new HealthClient(`127.0.0.1:${hostPort}`, { "grpc.use_local_subchannel_pool": 1 });
  try {
    const status = await health.check(1_000);
    return status === "SERVING" ? true : `health ${status}`;
  } finally {
    health.close();
  }
}

/**
 * The gateway's readiness with every upstream reached: `/readyz` answers 200 `"ready"` — the
 * required services SERVING, and the optional ones too, not `"degraded"` (docs/design/operations.md#health-and-readiness): the
 * gateway starts beside its upstreams, and a channel it opened before one was up reconnects
 * only after its backoff.
 */
async function gatewayReady(hostPort: number): Promise<true | string> {
  try {
    const r = await fetch(`http://127.0.0.1:${hostPort}/readyz`, { signal: AbortSignal.timeout(2_000) });
    const body = await r.text();
    if (r.status === 200 && (JSON.parse(body) as { status?: string }).status === "ready") return true;
    return `/readyz ${r.status} ${body.slice(0, 300)}`;
  } catch (err) {
    return `/readyz: ${(err as Error).message}`;
  }
}

/** An APS service container from the image: read-only root, writable `/tmp`, the given command and env. */
export function apsContainer(image: string, script: string, env: Record<string, string>): ApsGenericContainer {
  return new ApsGenericContainer(image)
    .withReadOnlyRootFilesystem()
    .withTmpFs({ "/tmp": "rw,size=256m" })
    .withCommand([script])
    .withEnvironment(env);
}

/** PostgreSQL (Debian's package) on `network` as `postgres`, port 5432 published for the test. */
export async function startPostgresContainer(
  images: ContainerImages,
  network: StartedNetwork,
  password: string,
): Promise<StartedTestContainer> {
  return new GenericContainer(images.postgres)
    .withNetwork(network)
    .withNetworkAliases("postgres")
    .withEnvironment({ POSTGRES_PASSWORD: password, POSTGRES_DB: "aps" })
    .withExposedPorts(5432)
    .withWaitStrategy(Wait.forListeningPorts())
    .withStartupTimeout(60_000)
    .start();
}

/**
 * NATS JetStream (Debian's package) on `network` as `nats`, port 4222 published for the test;
 * with `dataVolume`, JetStream's `/data` on that named volume (it outlives the container).
 */
export async function startNatsContainer(
  images: ContainerImages,
  network: StartedNetwork,
  dataVolume?: string,
): Promise<StartedTestContainer> {
  const container = new ApsGenericContainer(images.nats);
  if (dataVolume) container.withNamedVolume(dataVolume, "/data");
  return container
    .withNetwork(network)
    .withNetworkAliases("nats")
    .withExposedPorts(4222)
    .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
    .withStartupTimeout(60_000)
    .start();
}

/** How startContainerTopology runs the topology. */
export interface ContainerTopologyOptions {
  /** How long the containers may take to be ready (default 180 s). */
  readyTimeoutMs?: number;
  /**
   * NATS on a network of its own that every APS container joins as well (without aliases there:
   * peers resolve each other on `network` only), so that `docker network disconnect <natsNetwork>
   * <container>` cuts that service off NATS only — its gRPC peers and PostgreSQL stay reachable.
   */
  separateNatsNetwork?: boolean;
  /**
   * JetStream's `/data` on a named Docker volume created for the run (and removed by `stop()`),
   * so that the NATS container can be stopped and started with its data.
   */
  natsVolume?: boolean;
  /** Extra env for one deployable (e.g. its OTEL_SERVICE_NAME), added after the common env. */
  envFor?: (name: string) => Record<string, string>;
  /**
   * `/etc/hosts` entries for every APS container, host name → IP; `host-gateway` is the engine's
   * address of the host (how a container reaches a receiver the test runs, docs/design/operations.md#the-image).
   */
  extraHosts?: Record<string, string>;
}

/** The containerised distributed topology: the infrastructure and one container per deployable. */
export interface ContainerTopology {
  network: StartedNetwork;
  /** The network NATS is on: `network`, or a network of its own (`separateNatsNetwork`). */
  natsNetwork: StartedNetwork;
  /** The named volume of JetStream's data (`natsVolume`), else undefined. */
  natsVolume?: string;
  postgres: StartedTestContainer;
  nats: StartedTestContainer;
  /** Containers by deployable name (the gRPC services and `gateway`). */
  services: Record<string, StartedTestContainer>;
  /** `http://127.0.0.1:<published port>` of the gateway. */
  gatewayUrl: string;
  /** The env every APS container got (DATABASE_URL with the container host names, NATS_URL, …). */
  env: Record<string, string>;
  /** DATABASE_URL / NATS_URL as the test process reaches them (published ports on 127.0.0.1). */
  hostUrls: { database: string; nats: string };
  /**
   * Stops the APS containers (all at once), then PostgreSQL and NATS (together), and removes the
   * networks (and the JetStream volume).
   */
  stop(): Promise<void>;
}

/**
 * Starts the distributed topology in containers: PostgreSQL and NATS, then every service of the
 * one service list and the gateway all at once (docs/design/tests.md#container-systems), every one from the APS image on
 * the same network, reached by its service name (`forum:50052`, …), each with its own internal
 * token and its peers' digests as deploy/local does (docs/design/services.md#caller-policy-and-internal-trust), and a short JetStream ack
 * wait (`NATS_ACK_WAIT_MS` = TEST_NATS_ACK_WAIT_MS, docs/design/events.md#jetstream-stream-and-consumers). `env` is added to every APS
 * container. Each service container waits for its own gRPC health check to answer SERVING; the
 * gateway's for `/readyz` to answer 200 `"ready"` (every upstream reached, docs/design/operations.md#health-and-readiness);
 * resolves when all are (`readyTimeoutMs`, default 180 s). When one fails, the others are removed
 * at once and the error names each container that failed, why, and its last lines of output.
 * The fault suites ask for NATS on a network of its own and JetStream on a named volume
 * (ContainerTopologyOptions).
 */
export async function startContainerTopology(
  images: ContainerImages,
  env: Record<string, string> = {},
  options: ContainerTopologyOptions = {},
): Promise<ContainerTopology> {
  const readyTimeoutMs = options.readyTimeoutMs ?? 180_000;
  const extraHosts = Object.entries(options.extraHosts ?? {}).map(([host, ipAddress]) => ({ host, ipAddress }));
  const network = await new Network().start();
  const infra: StartedTestContainer[] = [];
  const aps: StartedTestContainer[] = [];
  let natsNetwork: StartedNetwork | undefined;
  let natsVolume: string | undefined;
  const stop = async () => {
    const stopAll = (cs: StartedTestContainer[]) =>
      Promise.all(cs.map((c) => c.stop({ timeout: 10_000 }).catch(() => undefined)));
    // the APS containers first (they drain against a database and a bus that still answer)
    await stopAll(aps);
    await stopAll(infra);
    // a container a fault test left cut off still counts as an endpoint of nothing: remove the networks
    await natsNetwork?.stop().catch(() => undefined);
    await network.stop().catch(() => undefined);
    if (natsVolume) await docker("volume", "rm", "-f", natsVolume).catch(() => undefined);
  };
  try {
    if (options.separateNatsNetwork) natsNetwork = await new Network().start();
    if (options.natsVolume) {
      natsVolume = `aps-test-nats-${randomBytes(6).toString("hex")}`;
      await docker("volume", "create", "--label", "org.testcontainers=true", natsVolume);
    }
    const password = randomBytes(12).toString("hex");
    const [postgres, nats] = await Promise.all([
      startPostgresContainer(images, network, password),
      startNatsContainer(images, natsNetwork ?? network, natsVolume),
    ]);
    infra.push(postgres, nats);
    const addrs = Object.fromEntries(SERVICES.map((s) => [grpcAddrEnv(s.name), `${s.name}:${s.port}`]));
    const common = {
      DATABASE_URL: `postgres://postgres:${password}@postgres:5432/aps`,
      NATS_URL: "nats://nats:4222",
      NATS_ACK_WAIT_MS: TEST_NATS_ACK_WAIT_MS,
      LOG_LEVEL: "warn",
      ...addrs,
      ...env,
    };
    const trust = generateTrustEnv([...SERVICES.map((s) => s.name), GATEWAY.name]);

    // Every APS container at once: each waits for its own readiness; the first to fail removes the
    // others (labelled with this start's id, so that those still being created are found too).
    const startId = randomBytes(6).toString("hex");
    const abort = new AbortController();
    const plan = [
      ...SERVICES.map((s) => ({
        name: s.name,
        port: s.port,
        ready: grpcServing,
        env: { ...common, ...trust[s.name], [listenAddrEnv(s.name)]: `0.0.0.0:${s.port}`, ...options.envFor?.(s.name) },
      })),
      {
        name: GATEWAY.name,
        port: GATEWAY.port,
        ready: gatewayReady,
        env: { ...common, ...trust[GATEWAY.name], PORT: String(GATEWAY.port), ...options.envFor?.(GATEWAY.name) },
      },
    ];
    /** What became of one container: started, failed (with its output), or removed because another failed. */
    type Outcome = { name: string; container?: StartedTestContainer; error?: Error; output?: OutputTail };
    const outcomes = await Promise.all(
      plan.map(async (p): Promise<Outcome> => {
        const output = new OutputTail();
        try {
          const c = await apsContainer(images.aps, entryPoint(p.name), p.env)
            .withLabels({ "aps.topology-start": startId })
            .withLogConsumer(output.consume)
            .withExtraHosts(extraHosts)
            .withNetwork(network)
            .withNetworkAliases(p.name)
            .withExtraNetworks(natsNetwork)
            .withExposedPorts(p.port)
            .withWaitStrategy(new ApsReadyWait(p.port, p.ready, abort.signal))
            .withStartupTimeout(readyTimeoutMs)
            .start();
          aps.push(c);
          return { name: p.name, container: c };
        } catch (err) {
          if (abort.signal.aborted) return { name: p.name };
          abort.abort(`stopped: ${p.name} failed to start`);
          // the others, started or not yet: removed now rather than waited for
          const ids = await docker("ps", "-aq", "--filter", `label=aps.topology-start=${startId}`).catch(() => "");
          if (ids) await docker("rm", "-f", ...ids.split(/\s+/)).catch(() => undefined);
          return { name: p.name, error: err as Error, output };
        }
      }),
    );
    const failed = outcomes.filter((o) => o.error);
    if (failed.length > 0) {
      const stopped = outcomes.filter((o) => !o.error).map((o) => o.name);
      throw new Error(
        [
          `container topology (${images.aps}): ${failed.map((f) => f.name).join(", ")} failed to start` +
            (stopped.length > 0 ? `; stopped the others (${stopped.join(", ")})` : ""),
          ...failed.flatMap((f) => [
            `- ${f.name}: ${f.error?.message}`,
            `  its last lines of output:`,
            f.output?.text() ?? "",
          ]),
        ].join("\n"),
      );
    }
    const services: Record<string, StartedTestContainer> = {};
    for (const o of outcomes) services[o.name] = o.container!; // in the service list's order, the gateway last
    const gateway = services[GATEWAY.name]!;
    return {
      network,
      natsNetwork: natsNetwork ?? network,
      natsVolume,
      postgres,
      nats,
      services,
      gatewayUrl: `http://127.0.0.1:${gateway.getMappedPort(GATEWAY.port)}`,
      env: common,
      hostUrls: {
        database: `postgres://postgres:${password}@127.0.0.1:${postgres.getMappedPort(5432)}/aps`,
        nats: `nats://127.0.0.1:${nats.getMappedPort(4222)}`,
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The all-in-one in one container (embedded PostgreSQL on the image's `/data` volume). */
export interface ContainerAllInOne {
  container: StartedTestContainer;
  /** `http://127.0.0.1:<published port>` */
  url: string;
  stop(): Promise<void>;
}

/**
 * Runs `services/all-in-one/dist/main.js` from the image as `docker run --read-only --tmpfs /tmp`
 * with its data on the image's `/data` volume; resolves once `/readyz` answers 200.
 */
export async function startContainerAllInOne(
  images: ContainerImages,
  env: Record<string, string> = {},
  readyTimeoutMs = 180_000,
): Promise<ContainerAllInOne> {
  const container = await apsContainer(images.aps, "services/all-in-one/dist/main.js", {
    LOG_LEVEL: "warn",
    ...env,
    PORT: String(GATEWAY.port),
  })
    .withExposedPorts(GATEWAY.port)
    .withWaitStrategy(Wait.forHttp("/readyz", GATEWAY.port).forStatusCode(200))
    .withStartupTimeout(readyTimeoutMs)
    .start();
  return {
    container,
    url: `http://127.0.0.1:${container.getMappedPort(GATEWAY.port)}`,
    stop: async () => void (await container.stop({ timeout: 15_000, removeVolumes: true })),
  };
}
