/**
 * APS in containers for the tests (docs/adr/0120): the image `npm run image` builds, and PostgreSQL
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
import { GenericContainer, Network, Wait, type StartedNetwork, type StartedTestContainer } from "testcontainers";
import { entryPoint, GATEWAY, generateTrustEnv, grpcAddrEnv, listenAddrEnv, SERVICES } from "@aps/platform";
import { TEST_NATS_ACK_WAIT_MS } from "./infra.js";
import { docker, type ContainerImages } from "./images.js";

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
   * address of the host (how a container reaches a receiver the test runs, docs/adr/0120).
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
  /** Stops every container (the gateway first) and removes the network. */
  stop(): Promise<void>;
}

/**
 * Starts the distributed topology in containers: PostgreSQL, NATS, then each service of the one
 * service list in its start order and the gateway last, every one from the APS image on the
 * same network, reached by its service name (`forum:50052`, …), each with its own internal
 * token and its peers' digests as deploy/local does (docs/adr/0119), and a short JetStream ack
 * wait (`NATS_ACK_WAIT_MS` = TEST_NATS_ACK_WAIT_MS, docs/adr/0146). `env` is added to every APS
 * container. Resolves once the gateway's `/readyz` answers 200 (`readyTimeoutMs`, default 180 s).
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
  const started: StartedTestContainer[] = [];
  let natsNetwork: StartedNetwork | undefined;
  let natsVolume: string | undefined;
  const stop = async () => {
    for (const c of started.reverse()) await c.stop({ timeout: 10_000 }).catch(() => undefined);
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
    started.push(postgres, nats);
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
    const services: Record<string, StartedTestContainer> = {};
    for (const s of SERVICES) {
      services[s.name] = await apsContainer(images.aps, entryPoint(s.name), {
        ...common,
        ...trust[s.name],
        [listenAddrEnv(s.name)]: `0.0.0.0:${s.port}`,
        ...options.envFor?.(s.name),
      })
        .withExtraHosts(extraHosts)
        .withNetwork(network)
        .withNetworkAliases(s.name)
        .withExtraNetworks(natsNetwork)
        .withStartupTimeout(readyTimeoutMs)
        .withWaitStrategy(Wait.forListeningPorts())
        .withExposedPorts(s.port)
        .start();
      started.push(services[s.name]!);
    }
    const gateway = await apsContainer(images.aps, entryPoint(GATEWAY.name), {
      ...common,
      ...trust[GATEWAY.name],
      PORT: String(GATEWAY.port),
      ...options.envFor?.(GATEWAY.name),
    })
      .withExtraHosts(extraHosts)
      .withNetwork(network)
      .withNetworkAliases(GATEWAY.name)
      .withExtraNetworks(natsNetwork)
      .withExposedPorts(GATEWAY.port)
      .withWaitStrategy(Wait.forHttp("/readyz", GATEWAY.port).forStatusCode(200))
      .withStartupTimeout(readyTimeoutMs)
      .start();
    started.push(gateway);
    services[GATEWAY.name] = gateway;
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
