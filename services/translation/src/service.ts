import { fileURLToPath } from "node:url";
import {
  DEFAULT_RETENTION,
  serviceClient,
  migrate,
  RetentionJob,
  type RetentionRule,
  type RetentionSettings,
  readinessProbe,
  startGrpcServer,
  systemClock,
  type Clock,
  type Database,
  type LocalEndpoint,
  type Logger,
  type ServiceTarget,
  type GrpcServerTuning,
  type InternalTrust,
  databaseOptionsOf,
  migrateSchema,
  grpcServerTuningOf,
  internalTrustOf,
  openDatabase,
  retentionOf,
  type ApsGrpcService,
} from "@aps/platform";
import { translation, forum as forumProto } from "@aps/proto";
import { loadConfig, translationQuotas, type TranslationConfig } from "./config.js";
import { engineFromConfig } from "./engines/index.js";
import type { TranslationEngine } from "./engines/types.js";
import { translationHandlers } from "./grpc/handlers.js";
import { TranslationRepository } from "./store/repository.js";
import { Translator } from "./translator.js";

// The same relative place in src/ and dist/ (the build copies the SQL files there), so the service runs from either.
const MIGRATIONS_DIR = fileURLToPath(new URL("./store/migrations", import.meta.url));

/** What `startTranslation` needs beyond its database and logger. */
export interface TranslationOptions {
  listenAddr: string;
  /** The forum, read for post text: its gRPC address (`FORUM_GRPC_ADDR`), or in the all-in-one its in-process endpoint (docs/design/services.md#in-process-transport). */
  forumAddr: ServiceTarget<typeof forumProto.ForumServiceDefinition>;
  /** undefined = no engine: generation answers 503, cache reads work. */
  engine: TranslationEngine | undefined;
  /** New translations per key per UTC day (TRANSLATION_DAILY_QUOTA). */
  dailyQuota: number;
  /** Per client source per UTC day (TRANSLATION_DAILY_QUOTA_PER_SOURCE, docs/design/identity-and-abuse.md#budgets-per-source); default 5 × dailyQuota. */
  sourceQuota?: number;
  /** For the whole deployment per UTC day (TRANSLATION_DAILY_QUOTA_GLOBAL, docs/design/identity-and-abuse.md#budgets-per-source); default 10 000. */
  globalQuota?: number;
  timeoutMs: number;
  clock?: Clock;
  /** Retention of its quota counters and leases (RETENTION_*, docs/design/operations.md#retention); default DEFAULT_RETENTION. */
  retention?: RetentionSettings;
}

/**
 * Retention of the translation tables that only grow (docs/retention.md,
 * docs/design/operations.md#retention): per-day quota rows of days before RETENTION_DAILY_COUNTERS (only today's are
 * read) and generation leases expired RETENTION_EXPIRED ago. Stored translations are content
 * (bounded by posts × languages): kept.
 */
export function translationRetentionRules(s: RetentionSettings): RetentionRule[] {
  return [
    { table: "quota_usage", column: "day", columnType: "date", olderThanMs: s.dailyCountersMs },
    { table: "generation_leases", column: "expires_at", olderThanMs: s.expiredMs },
  ];
}

/** A running translation service. */
export interface TranslationHandle {
  port: number;
  translator: Translator;
  /** The service in-process, for the clients of the all-in-one (docs/design/services.md#in-process-transport). */
  local: LocalEndpoint<typeof translation.TranslationServiceDefinition>;
  stop(): Promise<void>;
}

/**
 * Starts the translation service (docs/design/search-and-translation.md#machine-translation): migrations of the `translation` schema, then
 * gRPC (+ health) on `opts.listenAddr`. It publishes no events, so it needs no bus.
 * `stop()` drains gRPC, closes the forum channel and the database.
 */
export async function startTranslation(
  deps: {
    db: Database;
    log: Logger;
    trust?: InternalTrust | undefined;
    grpc?: GrpcServerTuning | undefined;
    /** Deadline of its calls to the forum, ms (GRPC_DEADLINE_MS); absent = 10 000. */
    callDeadlineMs?: number | undefined;
  },
  opts: TranslationOptions,
): Promise<TranslationHandle> {
  await migrate(deps.db, MIGRATIONS_DIR, deps.log);
  const forum = serviceClient(forumProto.ForumServiceDefinition, opts.forumAddr, {
    caller: deps.trust?.caller,
    deadlineMs: deps.callDeadlineMs,
  });
  const translator = new Translator(new TranslationRepository(deps.db.pool), forum, opts.engine, {
    dailyQuota: opts.dailyQuota,
    ...(opts.sourceQuota !== undefined ? { sourceQuota: opts.sourceQuota } : {}),
    ...(opts.globalQuota !== undefined ? { globalQuota: opts.globalQuota } : {}),
    timeoutMs: opts.timeoutMs,
    clock: opts.clock ?? systemClock,
    log: deps.log,
  });
  const implementation = translationHandlers(translator, deps.log);
  const grpc = await startGrpcServer(
    opts.listenAddr,
    [
      {
        name: "aps.translation.v1.TranslationService",
        definition: translation.TranslationServiceService,
        implementation,
      },
    ],
    deps.log,
    { probe: readinessProbe(deps.db), callers: deps.trust?.callers, ...deps.grpc },
  );
  deps.log.info(
    {
      engine: opts.engine?.name ?? "none",
      dailyQuota: opts.dailyQuota,
      sourceQuota: translator.sourceQuota,
      globalQuota: translator.globalQuota,
    },
    "translation service ready",
  );
  const settings = opts.retention ?? DEFAULT_RETENTION;
  const retention = new RetentionJob(deps.db.pool, translationRetentionRules(settings), deps.log, {
    intervalMs: settings.intervalMs,
    batchSize: settings.batchSize,
    service: "translation",
  });
  retention.start();
  return {
    port: grpc.port,
    translator,
    local: grpc.local(translation.TranslationServiceDefinition, implementation),
    stop: async () => {
      await retention.stop();
      await grpc.shutdown();
      forum.close();
      await deps.db.close();
    },
  };
}

/**
 * The translation service as every launcher runs it (docs/design/services.md#one-service-contract): its database
 * (TRANSLATION_DATABASE_URL, else the all-in-one's, else DATABASE_URL), its engine from the config
 * (engineFromConfig), quotas, timeout and retention mapped to {@link TranslationOptions} once. It
 * has no bus. When the start fails, the database is closed.
 */
export const translationService: ApsGrpcService<"translation", TranslationConfig> = {
  name: "translation",
  loadConfig,
  migrate: ({ cfg, log }) => migrateSchema("translation", cfg, log, [MIGRATIONS_DIR]),
  start: async (ctx) => {
    const { cfg, log } = ctx;
    const db = await openDatabase({
      url: cfg.databaseUrl ?? ctx.databaseUrl,
      schema: "translation",
      log,
      ...databaseOptionsOf(cfg),
      ...ctx.pool,
    });
    try {
      return await startTranslation(
        {
          db,
          log,
          trust: internalTrustOf("translation", cfg),
          grpc: grpcServerTuningOf(cfg),
          callDeadlineMs: cfg.GRPC_DEADLINE_MS,
        },
        {
          listenAddr: ctx.listenAddr ?? cfg.TRANSLATION_LISTEN_ADDR,
          forumAddr: ctx.targets.forum,
          clock: ctx.clock,
          engine: engineFromConfig(cfg),
          ...translationQuotas(cfg),
          timeoutMs: cfg.TRANSLATION_TIMEOUT_MS,
          retention: retentionOf(cfg),
        },
      );
    } catch (err) {
      await db.close().catch(() => undefined);
      throw err;
    }
  },
};
