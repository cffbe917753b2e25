import { fileURLToPath } from "node:url";
import { ForumClient, migrate, readinessProbe, startGrpcServer, systemClock, type Clock, type Database, type Logger } from "@aps/platform";
import { translation } from "@aps/proto";
import type { TranslationEngine } from "./engines/types.js";
import { translationHandlers } from "./grpc/handlers.js";
import { TranslationRepository } from "./store/repository.js";
import { Translator } from "./translator.js";

const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));

/** What `startTranslation` needs beyond its database and logger. */
export interface TranslationOptions {
  listenAddr: string;
  /** The forum (`FORUM_GRPC_ADDR`), read for post text. */
  forumAddr: string;
  /** undefined = no engine: generation answers 503, cache reads work. */
  engine: TranslationEngine | undefined;
  dailyQuota: number;
  timeoutMs: number;
  clock?: Clock;
}

/** A running translation service. */
export interface TranslationHandle {
  port: number;
  translator: Translator;
  stop(): Promise<void>;
}

/**
 * Starts the translation service (DESIGN.md §7): migrations of the `translation` schema, then
 * gRPC (+ health) on `opts.listenAddr`. It publishes no events, so it needs no bus.
 * `stop()` drains gRPC, closes the forum channel and the database.
 */
export async function startTranslation(deps: { db: Database; log: Logger }, opts: TranslationOptions): Promise<TranslationHandle> {
  await migrate(deps.db, MIGRATIONS_DIR, deps.log);
  const forum = new ForumClient(opts.forumAddr);
  const translator = new Translator(new TranslationRepository(deps.db.pool), forum, opts.engine, {
    dailyQuota: opts.dailyQuota,
    timeoutMs: opts.timeoutMs,
    clock: opts.clock ?? systemClock,
    log: deps.log,
  });
  const grpc = await startGrpcServer(
    opts.listenAddr,
    [{ name: "aps.translation.v1.TranslationService", definition: translation.TranslationServiceService, implementation: translationHandlers(translator, deps.log) }],
    deps.log,
    { probe: readinessProbe(deps.db) },
  );
  deps.log.info({ engine: opts.engine?.name ?? "none", dailyQuota: opts.dailyQuota }, "translation service ready");
  return {
    port: grpc.port,
    translator,
    stop: async () => {
      await grpc.shutdown();
      forum.close();
      await deps.db.close();
    },
  };
}
