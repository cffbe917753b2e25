import { fileURLToPath } from "node:url";
import {
  serviceClient,
  startService,
  systemClock,
  type Clock,
  type LocalEndpoint,
  type ServiceDeps,
  type ServiceTarget,
  startWithServiceDeps,
  type ApsGrpcService,
  migrateSchema,
  PLATFORM_MIGRATIONS_DIR,
  type BallotSealing,
} from "@aps/platform";
import { council, forum as forumProto, identity as identityProto } from "@aps/proto";
import { loadConfig, type CouncilConfig } from "./config.js";
import { CouncilRepository } from "./store/repository.js";
import { councilHandlers } from "./grpc/handlers.js";
import { consumeAgenda } from "./events/agenda.js";
import { DeadlineScheduler } from "./scheduler.js";

// The same relative place in src/ and dist/ (the build copies the SQL files there), so the service runs from either.
const MIGRATIONS_DIR = fileURLToPath(new URL("./store/migrations", import.meta.url));

/** What `startCouncil` needs beyond the shared deps. */
export interface CouncilOptions {
  listenAddr: string;
  /** The identity service: its gRPC address, or in the all-in-one its in-process endpoint (docs/design/services.md#in-process-transport). */
  identityAddr: ServiceTarget<typeof identityProto.IdentityServiceDefinition>;
  /** The forum: its gRPC address, or in the all-in-one its in-process endpoint. */
  forumAddr: ServiceTarget<typeof forumProto.ForumServiceDefinition>;
  /** COUNCIL_DEADLINE in ms. */
  deadlineMs: number;
  /** LAST_CALL_MS: how long a decided outcome waits before it is final (0: final at once). */
  lastCallMs: number;
  /** BALLOT_SEALING: the sealing of the cases opened from now on (default "off" here; the config's default is "until_closed"). */
  sealing?: BallotSealing;
  /** COUNCIL_MIN_OWNERS: the k of the cases opened from now on (default 0, off; docs/design/council.md#operator-diverse-adoption). */
  minOwners?: number;
  /** Scheduler period, ms. */
  tickMs: number;
  clock?: Clock;
}

/** A running council service. */
export interface CouncilHandle {
  port: number;
  repo: CouncilRepository;
  /** The service in-process, for the clients of the all-in-one (docs/design/services.md#in-process-transport). */
  local: LocalEndpoint<typeof council.CouncilServiceDefinition>;
  stop(): Promise<void>;
}

/**
 * Starts the council: migrations, gRPC (+ health), the outbox relay, the first case summary of
 * cases from before revisions (docs/design/council.md#the-forums-projection-of-the-case), the `post_on_agenda` consumer and the deadline scheduler.
 */
export async function startCouncil(deps: ServiceDeps, opts: CouncilOptions): Promise<CouncilHandle> {
  const identity = serviceClient(identityProto.IdentityServiceDefinition, opts.identityAddr, {
    caller: deps.trust?.caller,
    deadlineMs: deps.callDeadlineMs,
  });
  const forum = serviceClient(forumProto.ForumServiceDefinition, opts.forumAddr, {
    caller: deps.trust?.caller,
    deadlineMs: deps.callDeadlineMs,
  });
  return startService(deps, {
    migrationsDir: MIGRATIONS_DIR,
    listenAddr: opts.listenAddr,
    service: { grpc: council.CouncilServiceService, generic: council.CouncilServiceDefinition },
    repository: (wake) =>
      new CouncilRepository(
        deps.db.pool,
        opts.clock ?? systemClock,
        opts.deadlineMs,
        wake,
        opts.lastCallMs,
        opts.sealing,
        opts.minOwners,
      ),
    handlers: (repo) => councilHandlers(repo, identity, forum, deps.log),
    background: async (repo) => {
      // The upgrade's backfill: every case from before revisions gets its first summary, once (docs/design/council.md#the-forums-projection-of-the-case).
      const summarized = await repo.summarizeUnsummarized();
      if (summarized > 0) deps.log.info({ summarized }, "published the first case summary of earlier cases");
      const agenda = await consumeAgenda(deps.bus, repo, identity);
      const scheduler = new DeadlineScheduler(repo, opts.tickMs, deps.log);
      scheduler.start();
      return [agenda, scheduler];
    },
    closeAfterDrain: [identity, forum],
  });
}

/**
 * The council as every launcher runs it (docs/design/services.md#one-service-contract): its config (COUNCIL_DEADLINE,
 * COUNCIL_TICK_MS) mapped to {@link CouncilOptions} once, for `main.ts` and the all-in-one alike.
 */
export const councilService: ApsGrpcService<"council", CouncilConfig> = {
  name: "council",
  loadConfig,
  migrate: ({ cfg, log }) => migrateSchema("council", cfg, log, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR]),
  start: (ctx) =>
    startWithServiceDeps("council", ctx, (deps) =>
      startCouncil(deps, {
        listenAddr: ctx.listenAddr ?? ctx.cfg.COUNCIL_LISTEN_ADDR,
        clock: ctx.clock,
        identityAddr: ctx.targets.identity,
        forumAddr: ctx.targets.forum,
        deadlineMs: ctx.cfg.COUNCIL_DEADLINE,
        lastCallMs: ctx.cfg.LAST_CALL_MS,
        sealing: ctx.cfg.BALLOT_SEALING,
        minOwners: ctx.cfg.COUNCIL_MIN_OWNERS,
        tickMs: ctx.cfg.COUNCIL_TICK_MS,
      }),
    ),
};
