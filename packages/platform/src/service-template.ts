import type { ServiceDefinition } from "@grpc/grpc-js";
import { readinessProbe } from "./db/database.js";
import { migrate } from "./db/migrate.js";
import { PLATFORM_MIGRATIONS_DIR } from "./db/paths.js";
import { OutboxRelay } from "./bus/outbox.js";
import {
  DEFAULT_RETENTION,
  platformRetentionRules,
  RetentionJob,
  type RetentionRule,
  type RetentionSettings,
} from "./retention.js";
import type { ServiceDefinitionLike } from "./grpc/channel.js";
import type { Implementation, LocalEndpoint } from "./grpc/local.js";
import { startGrpcServer } from "./grpc/server.js";
import type { ServiceDeps } from "./runtime.js";

/** Something a service started and must stop: a consumer, a scheduler, a client. */
export interface Stoppable {
  stop(): Promise<void> | void;
}

/** What a service built on the template provides (docs/design/services.md#start-and-stop-order). */
export interface ServiceTemplate<D extends ServiceDefinitionLike, R> {
  /** Its SQL migrations, applied after the platform's (outbox, processed_events). */
  migrationsDir: string;
  /** Its SQL functions (`store/functions/`), re-applied after the migrations at every start (docs/design/services.md#sql-functions-in-files). */
  functionsDir?: string;
  /** gRPC listen address (`<NAME>_LISTEN_ADDR`). */
  listenAddr: string;
  /** The generated definitions of its one gRPC service: grpc-js's (`…Service`) and the generic one (`…Definition`). */
  service: { grpc: ServiceDefinition; generic: D };
  /**
   * Builds the repository; `wake` wakes the outbox relay after a commit that wrote events
   * (EventOutbox); `relay` is that relay, for a write that waits until its events are on the bus
   * (EventOutbox `announced`).
   */
  repository(wake: () => void, relay: OutboxRelay): R;
  /** The gRPC handlers over the repository. */
  handlers(repo: R): Implementation<D>;
  /**
   * Starts what runs beside the handlers (event consumers, schedulers, clients) once gRPC serves;
   * they are stopped first, in reverse order, before gRPC drains.
   */
  background?(repo: R): Promise<Stoppable[]>;
  /**
   * Retention rules of its own tables that only grow (docs/retention.md), run by
   * the template's retention job next to the platform's (outbox, processed_events,
   * idempotency_outcomes).
   */
  retention?(settings: RetentionSettings): RetentionRule[];
  /** Closed after gRPC has drained (the handlers' own clients of other services). */
  closeAfterDrain?: { close(): void }[];
}

/** A running service of the template. */
export interface RunningService<D extends ServiceDefinitionLike, R> {
  port: number;
  repo: R;
  /** The service in-process, for the clients of the all-in-one (docs/design/services.md#in-process-transport). */
  local: LocalEndpoint<D>;
  /** Its retention job (RETENTION_*, docs/design/operations.md#retention): `runOnce()` prunes now. */
  retention: RetentionJob;
  /** Stops the background work (reverse order), drains gRPC, stops the relay, closes the handlers' clients and the database. */
  stop(): Promise<void>;
}

/**
 * Starts a service with its own PostgreSQL schema and outbox, the same way for every one of them
 * (docs/design/services.md#start-and-stop-order): migrations (platform's, then its own), the outbox relay, its gRPC service with
 * the health protocol (NOT_SERVING while its database does not answer, docs/design/operations.md#health-and-readiness), then its
 * background work. The relay starts last, after everything that may write events is up; then the
 * retention job (docs/design/operations.md#retention), first to stop.
 * Rejects when migrations or the gRPC bind fail (nothing is left running then but the database,
 * which is the caller's).
 */
export async function startService<D extends ServiceDefinitionLike, R>(
  deps: ServiceDeps,
  spec: ServiceTemplate<D, R>,
): Promise<RunningService<D, R>> {
  await migrate(
    deps.db,
    [PLATFORM_MIGRATIONS_DIR, spec.migrationsDir],
    deps.log,
    spec.functionsDir ? { functionsDir: spec.functionsDir } : {},
  );
  const relay = new OutboxRelay(deps.db.pool, deps.bus, deps.log);
  const repo = spec.repository(() => relay.notify(), relay);
  const implementation = spec.handlers(repo);
  const grpc = await startGrpcServer(
    spec.listenAddr,
    [
      {
        name: spec.service.generic.fullName,
        definition: spec.service.grpc,
        implementation,
      },
    ],
    deps.log,
    { probe: readinessProbe(deps.db), callers: deps.trust?.callers, ...deps.grpc },
  );
  const background = spec.background ? await spec.background(repo) : [];
  relay.start();
  const settings = deps.retention ?? DEFAULT_RETENTION;
  const retention = new RetentionJob(
    deps.db.pool,
    [...platformRetentionRules(settings), ...(spec.retention?.(settings) ?? [])],
    deps.log,
    { intervalMs: settings.intervalMs, batchSize: settings.batchSize, service: deps.db.schema },
  );
  retention.start();
  return {
    port: grpc.port,
    repo,
    local: grpc.local(spec.service.generic, implementation),
    retention,
    stop: async () => {
      await retention.stop();
      for (const b of [...background].reverse()) await b.stop();
      await grpc.shutdown();
      await relay.stop();
      for (const c of spec.closeAfterDrain ?? []) c.close();
      await deps.db.close();
    },
  };
}
