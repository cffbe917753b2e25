import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  createLogger,
  DEFAULT_DEADLINE_MS,
  InProcessBus,
  POOL_WAIT_MS,
  SERVICES,
  type Clock,
  type DeployableName,
  type Logger,
} from "@aps/platform";
import { startAllInOne, type AllInOne } from "@aps/all-in-one";
import {
  containerImages,
  containerImagesOrSkip,
  createTestDatabase,
  deleteTestStream,
  hasNats,
  hasPostgres,
  migratedTemplate,
  registerApsOrigin,
  startNode,
  TEST_NATS_ACK_WAIT_MS,
  TEST_NATS_URL,
  timeScaleCeiling,
  uniqueBusNames,
  type TestProcess,
} from "@aps/testkit";

/** Repository root (for spawning the built entry points). */
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * How a test runs APS:
 * - `embedded`: every service in the jest process on the embedded PostgreSQL server + the in-process bus (the default
 *   a newcomer gets from `npm start`);
 * - `real`: every service in the jest process on the real PostgreSQL (a fresh database) and
 *   NATS JetStream (a stream and subject prefix of its own);
 * - `aio-process`: `node services/all-in-one/dist/main.js` as a child (what `npm start` runs, without its young-generation flag: docs/design/services.md#the-all-in-ones-memory);
 * - `distributed`: `node deploy/local/start.mjs` — one process per service on real PostgreSQL + NATS;
 * - `aio-container`: the all-in-one from the APS image in one read-only container (docs/design/operations.md#the-image);
 * - `distributed-containers`: one container per service from the APS image, with PostgreSQL and
 *   NATS containers built from Debian's packages, on one Docker network (docs/design/operations.md#the-image);
 * - `chart-containers`: the chart's production render, each workload a container — started by the
 *   production rehearsal (test/deploy/rehearsal.test.ts, docs/operations/rehearsal.md), never by startSystem.
 */
export type Mode =
  "embedded" | "real" | "aio-process" | "distributed" | "aio-container" | "distributed-containers" | "chart-containers";

/** A running APS for one test file. */
export interface System {
  mode: Mode;
  /** `http://localhost:<port>/v1` */
  baseUrl: string;
  adminToken: string;
  /** The data folder of an embedded system (kept across `restart`). */
  dataDir?: string;
  /** The child process of a spawned mode. */
  process?: TestProcess;
  /**
   * The env the services run with, in the real-infrastructure modes (`real`, `distributed`):
   * DATABASE_URL, NATS_URL, NATS_STREAM and APS_SUBJECT_PREFIX of this system's own database and
   * stream, for tests that read or publish on them directly.
   */
  env?: Record<string, string>;
  /**
   * gRPC addresses of the services (`IDENTITY_GRPC_ADDR`, `FORUM_GRPC_ADDR`, `COUNCIL_GRPC_ADDR`,
   * `KNOWLEDGE_GRPC_ADDR`), in the in-jest modes, for tests that start another gateway on them.
   */
  grpcAddrs?: Record<string, string>;
  /**
   * The database the all-in-one's services use (`embedded`: its embedded server), for tests that
   * start a second gateway sharing the first's OAuth grants (docs/design/agents.md#oauth-for-mcp).
   */
  databaseUrl?: string;
  /**
   * The token those gRPC ports accept (the all-in-one's internal token, internal-token.ts): a
   * second gateway starts with it as APS_INTERNAL_TOKEN; a client passes `{ name: "gateway", token }`.
   */
  internalToken?: string;
  /**
   * The in-process endpoints the all-in-one's own clients call (in-jest modes), for tests that
   * compare them with the gRPC addresses (docs/design/services.md#in-process-transport).
   */
  local?: AllInOne["local"];
  /** Every process of a `distributed` system started with `replicas` (docs/design/operations.md#local-replicas). */
  processes?: TopologyProcess[];
  /** Stops the system and removes its data (database dropped, stream deleted, folder removed). */
  stop(): Promise<void>;
}

/** Options for `startSystem`. */
export interface SystemOptions {
  /** Extra env vars (limits etc.). */
  env?: Record<string, string>;
  /** Reuse this embedded data folder (restart tests); it is then not removed on stop. */
  dataDir?: string;
  /** One clock for every service (modes `embedded` and `real` only: they run in jest). */
  clock?: Clock;
  /** The services' logger (modes `embedded` and `real` only); default: level warn to stdout. */
  log?: Logger;
  /**
   * Processes per deployable (`{ forum: 2, gateway: 2 }`), mode `distributed` only: passed as
   * `REPLICAS_<NAME>` to deploy/local/start.mjs (docs/design/operations.md#local-replicas); `processes` then
   * names each one.
   */
  replicas?: Partial<Record<DeployableName, number>>;
  /**
   * Mode `real` only: run on this existing database (a restored backup) instead of a fresh copy of
   * the migrated template; it is left in place on stop.
   */
  databaseUrl?: string;
}

/** One process of a replicated distributed topology, as deploy/local/start.mjs names it (docs/design/operations.md#local-replicas). */
export interface TopologyProcess {
  name: DeployableName;
  /** 1, 2, … within its deployable. */
  replica: number;
  pid: number;
  /** Its gRPC port (a service) or HTTP port (a gateway). */
  port: number;
  /** Its `/metrics` URL (a replicated service's own METRICS_PORT; a gateway's API port); absent for a single service. */
  metrics?: string;
}

/**
 * The modes this machine can run: always the embedded ones; the real-infrastructure ones when
 * PostgreSQL and NATS are reachable (required under APS_TEST_REQUIRE_REAL=1, as in CI).
 */
export async function availableModes(): Promise<Mode[]> {
  const real = (await hasPostgres()) && (await hasNats());
  return real ? ["embedded", "real", "aio-process", "distributed"] : ["embedded", "aio-process"];
}

/**
 * The container modes, when `APS_TEST_IMAGE` names a built image and an engine runs; otherwise
 * none, with a loud warning naming `suite` (an error under `APS_TEST_REQUIRE_DOCKER=1`).
 */
export function containerModes(suite: string): Mode[] {
  return containerImagesOrSkip(suite) ? ["aio-container", "distributed-containers"] : [];
}

/** The run modes `APS_TEST_MODES` (comma-separated) selects; every mode when it is unset. */
function wantedModes(): (m: Mode) => boolean {
  const only = process.env.APS_TEST_MODES?.split(",").map((m) => m.trim());
  return (m) => !only || only.includes(m);
}

/**
 * The modes a suite about the behaviour of routes runs in (docs/design/tests.md#test-tiers, "Run modes"): the modes
 * that each add coverage, not every mode. `embedded` (every service in jest, the in-process bus and
 * transport, the embedded PostgreSQL server: what `npm start` runs) and, on real PostgreSQL + NATS,
 * `distributed` (one process per service: gRPC between them, JetStream, each service's own
 * `main.ts`). Left out as repeats of the same code path: `aio-process` (it runs `startAllInOne(…,
 * new InProcessBus)` like `embedded`, covered by the start-up, restart and SIGTERM suites) and
 * `real` (it differs from `distributed` only by the transport, which
 * test/platform/transport.contract.test.ts proves equal to gRPC). The container modes are
 * `imageModes`: the suites that test the image (api and notifications, docs/design/tests.md#container-systems) run in them from
 * test/e2e/image.test.ts, on one system per mode (docs/design/tests.md#container-systems). Narrowed by `APS_TEST_MODES` when set.
 */
export async function routeModes(_suite: string): Promise<Mode[]> {
  const wanted = wantedModes();
  return (await availableModes()).filter((m) => (m === "embedded" || m === "distributed") && wanted(m));
}

/**
 * The container modes of the image suites (test/e2e/image.test.ts, docs/design/tests.md#container-systems) where an image
 * is built (`containerModes`: a loud skip naming `suite` otherwise), narrowed by `APS_TEST_MODES`.
 * The image is looked for only when a container mode is wanted (a lane without them runs while the
 * image is still being built: scripts/suite.mjs).
 */
export function imageModes(suite: string): Mode[] {
  const wanted = wantedModes();
  if (!wanted("aio-container") && !wanted("distributed-containers")) return [];
  return containerModes(suite).filter(wanted);
}

/** At least 32 characters: the gateway refuses a shorter APS_ADMIN_TOKEN (docs/design/operations.md#chart-defaults-against-abuse). */
const ADMIN_TOKEN = "test-admin-token-0123456789abcdef";

/** Every SQL migration of the repository (packages/*\/src, services/*\/src), for the template's key. */
function migrationsKey(): string {
  const hash = createHash("sha256");
  for (const top of ["packages", "services"])
    for (const pkg of readdirSync(join(ROOT, top)).sort()) {
      const src = join(ROOT, top, pkg, "src");
      if (!existsSync(src)) continue;
      for (const f of (readdirSync(src, { recursive: true }) as string[])
        .filter((f) => /(^|\/)migrations\/.*\.sql$/.test(f))
        .sort())
        hash.update(`${top}/${pkg}/${f}\0`).update(readFileSync(join(src, f)));
    }
  return hash.digest("hex").slice(0, 16);
}

let migrated: Promise<string> | undefined;
/**
 * The name of a database every service's migrations ran on (testkit's `migratedTemplate`), made
 * once per machine and migration set by starting and stopping the all-in-one on it: the `real`
 * and `distributed` systems start on a copy of it. The embedded modes, the start-up
 * tests and the suites that create their own databases still migrate from nothing.
 */
function migratedDatabase(): Promise<string> {
  migrated ??= migratedTemplate(migrationsKey(), async (url) => {
    const names = uniqueBusNames();
    const log = createLogger("aps-test-template", "warn");
    const aps = await startAllInOne(
      {
        DATABASE_URL: url,
        NATS_URL: TEST_NATS_URL,
        NATS_STREAM: names.stream,
        APS_SUBJECT_PREFIX: names.prefix,
        PORT: "0",
        APS_START_APERTIUM: "off",
        LOG_LEVEL: "warn",
      },
      log,
      new InProcessBus(log),
    );
    await aps.stop();
    await deleteTestStream(names.stream);
  });
  return migrated;
}

/**
 * Per-minute request limits of a test system unless the test passes its own: high, because the
 * suite sends thousands of requests a minute from 127.0.0.1 (pep-replay, concurrency, bench).
 * `npm start` keeps the docs/design/edge.md#request-path defaults (600 keyed, 300 anonymous).
 */
export const TEST_RATE_LIMITS = { RATE_LIMIT_KEYED_PER_MINUTE: "10000000", RATE_LIMIT_ANON_PER_MINUTE: "10000000" };

/**
 * The call deadline (`GRPC_DEADLINE_MS`) and pool wait (`DATABASE_POOL_WAIT_MS`) of a test system,
 * stretched by the most the run's time scale may reach (timeScaleCeiling: 10× under `auto`), so a
 * request queued on a loaded machine is answered late rather than cut off with a 503 — a clock does
 * not decide the outcome (docs/design/tests.md "Waiting"). Unstretched (none set) at scale 1; a test that
 * asserts on the deadline passes its own.
 */
export function stretchedDeadlines(): Record<string, string> {
  const k = timeScaleCeiling();
  if (k <= 1) return {};
  return {
    GRPC_DEADLINE_MS: String(Math.round(DEFAULT_DEADLINE_MS * k)),
    DATABASE_POOL_WAIT_MS: String(Math.round(POOL_WAIT_MS * k)),
  };
}

/**
 * Starts APS in `mode`. Its origin is registered with the contract check, so every request a test
 * sends it is validated against the OpenAPI document (test/support/contract.setup.ts, docs/design/edge.md#contract-checks).
 */
export async function startSystem(mode: Mode, opts: SystemOptions = {}): Promise<System> {
  const sys = await startSystemUnchecked(mode, opts);
  registerApsOrigin(sys.baseUrl);
  return sys;
}

async function startSystemUnchecked(mode: Mode, opts: SystemOptions): Promise<System> {
  const env: Record<string, string> = {
    APS_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: "warn",
    PORT: "0",
    ...TEST_RATE_LIMITS,
    ...stretchedDeadlines(),
    // A case decided by ballots closes at once (no last call, docs/reference/council.md "Last
    // call") unless the test passes its own LAST_CALL_MS: the suites written before last calls
    // assert the close at the deciding ballot; the last call has its own tests.
    LAST_CALL_MS: "0",
    // Every test agent comes from loopback, one client source: the suites register more webhooks
    // than a network may hold (docs/design/notifications.md#fair-shares); the cap has its own tests.
    WEBHOOKS_PER_SOURCE: "1000",
    // Every position public while a case is open (docs/reference/council.md "Sealed ballots")
    // unless the test passes its own BALLOT_SEALING: the suites written before sealing read the
    // tally mid-review; sealing has its own tests.
    BALLOT_SEALING: "off",
    // A test's own keep-alive client is idle from its last request: the system stops without
    // waiting the production 5 s for it (docs/reliability.md "The gateway's drain")
    HTTP_DRAIN_IDLE_MS: "500",
    // No Apertium APY started by the all-in-one itself (docs/design/search-and-translation.md#translation-engines): a test names its engine.
    APS_START_APERTIUM: "off",
    ...(opts.env ?? {}),
  };
  if (mode === "chart-containers") throw new Error("mode chart-containers is the production rehearsal's own system");
  if (opts.clock && mode !== "embedded" && mode !== "real")
    throw new Error(`a test clock needs an in-jest mode, not ${mode}`);
  if (opts.replicas && mode !== "distributed") throw new Error(`replicas need mode distributed, not ${mode}`);
  for (const [name, n] of Object.entries(opts.replicas ?? {})) env[`REPLICAS_${name.toUpperCase()}`] = String(n);
  if (mode === "aio-container" || mode === "distributed-containers") {
    const images = containerImages();
    if ("missing" in images) throw new Error(`mode ${mode}: ${images.missing}`);
    const { PORT: _port, ...containerEnv } = env;
    // testcontainers is loaded only by the suites that start containers (packages/testkit/src/images.ts)
    const { startContainerAllInOne, startContainerTopology } = await import("@aps/testkit/containers");
    if (mode === "aio-container") {
      const aio = await startContainerAllInOne(images, containerEnv);
      return { mode, baseUrl: `${aio.url}/v1`, adminToken: ADMIN_TOKEN, stop: aio.stop };
    }
    const topo = await startContainerTopology(images, containerEnv);
    return {
      mode,
      baseUrl: `${topo.gatewayUrl}/v1`,
      adminToken: ADMIN_TOKEN,
      env: { DATABASE_URL: topo.hostUrls.database, NATS_URL: topo.hostUrls.nats },
      stop: topo.stop,
    };
  }
  if (mode === "embedded" || mode === "aio-process") {
    const ownDir = !opts.dataDir;
    const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "aps-test-"));
    const cleanup = () => (ownDir ? rmSync(dataDir, { recursive: true, force: true }) : undefined);
    // A fresh folder copies the run's template cluster (one initdb per run, docs/design/tests.md#template-databases); a folder the
    // test passes (restart tests) keeps the real initdb path.
    const template = process.env.APS_TEST_PG_TEMPLATE;
    if (ownDir && template) env.APS_EMBEDDED_PG_TEMPLATE ??= template;
    if (mode === "embedded") {
      const log = opts.log ?? createLogger("aps-test", "warn");
      const aps = await startAllInOne({ ...env, APS_DATA_DIR: dataDir }, log, new InProcessBus(log), {
        clock: opts.clock,
      });
      return {
        mode,
        baseUrl: aps.baseUrl,
        adminToken: ADMIN_TOKEN,
        dataDir,
        grpcAddrs: aps.grpcAddrs,
        databaseUrl: aps.databaseUrl,
        internalToken: aps.internalToken,
        local: aps.local,
        stop: async () => (await aps.stop(), cleanup()),
      };
    }
    const p = await startNode(
      [join(ROOT, "services/all-in-one/dist/main.js")],
      { ...env, APS_DATA_DIR: dataDir },
      /APS ready at (\S+)/,
    );
    return {
      mode,
      baseUrl: p.ready,
      adminToken: ADMIN_TOKEN,
      dataDir,
      process: p,
      stop: async () => (await p.stop(), cleanup()),
    };
  }
  if (opts.databaseUrl && mode !== "real") throw new Error(`databaseUrl needs mode real, not ${mode}`);
  const db = opts.databaseUrl
    ? { url: opts.databaseUrl, drop: async () => undefined }
    : await createTestDatabase(await migratedDatabase());
  const names = uniqueBusNames();
  const realEnv = {
    ...env,
    DATABASE_URL: db.url,
    NATS_URL: TEST_NATS_URL,
    NATS_ACK_WAIT_MS: TEST_NATS_ACK_WAIT_MS,
    NATS_STREAM: names.stream,
    APS_SUBJECT_PREFIX: names.prefix,
  };
  const dropStream = () => deleteTestStream(names.stream);
  if (mode === "real") {
    const log = opts.log ?? createLogger("aps-test", "warn");
    const aps = await startAllInOne(realEnv, log, new InProcessBus(log), { clock: opts.clock });
    return {
      mode,
      baseUrl: aps.baseUrl,
      adminToken: ADMIN_TOKEN,
      env: realEnv,
      grpcAddrs: aps.grpcAddrs,
      internalToken: aps.internalToken,
      local: aps.local,
      stop: async () => (await aps.stop(), await dropStream(), await db.drop()),
    };
  }
  const p = await startNode(
    [join(ROOT, "deploy/local/start.mjs")],
    // every service of the one list on a free port (a fixed default port collides with a
    // topology another test still runs)
    { ...realEnv, ...Object.fromEntries(SERVICES.map((svc) => [`${svc.name.toUpperCase()}_PORT`, "0"])) },
    /APS ready at (\S+)/,
  );
  const listed = /^APS processes: (.*)$/m.exec(p.output())?.[1];
  return {
    mode,
    baseUrl: p.ready,
    adminToken: ADMIN_TOKEN,
    process: p,
    ...(listed ? { processes: JSON.parse(listed) as TopologyProcess[] } : {}),
    env: realEnv,
    stop: async () => (await p.stop(), await dropStream(), await db.drop()),
  };
}
