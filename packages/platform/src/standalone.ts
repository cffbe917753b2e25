import { startTelemetry } from "./telemetry.js";
import type { ApsService, DependencyOf, StartedService } from "./service-contract.js";
import type { DeployableName } from "./topology.js";

/** The gRPC address variables a config holds for the services `N` calls (`FORUM_GRPC_ADDR`…). */
export type DependencyAddrs<N extends DeployableName> = {
  [D in DependencyOf<N> as `${Uppercase<D>}_GRPC_ADDR`]: string;
};

/**
 * Runs one service on its own, the entry point of `services/<name>/dist/main.js` (docs/design/services.md#one-service-contract):
 * tracing first (`startTelemetry(name)`; pg, gRPC and http are imported only after the SDK has
 * hooked them, so `load` must import the service with a dynamic `import()`), then its config from
 * `env`, its listen port (gRPC, or the gateway's HTTP `PORT`) held until its server binds it
 * (docs/design/services.md#port-reservation), its logger, the addresses of the services it calls from that config (`<NAME>_GRPC_ADDR`),
 * `start`, a `GET /metrics` listener on METRICS_PORT (unless the service serves its own), and a
 * graceful stop on SIGTERM/SIGINT (onShutdown: the service, then the metrics listener).
 * With `APS_MIGRATE_ONLY=1` it is the migration job instead (migrateAndExit).
 * Rejects — the process exits non-zero — when the config is invalid or the start fails.
 */
export async function runStandalone<
  N extends DeployableName,
  Cfg extends { LOG_LEVEL: string } & DependencyAddrs<N>,
  Handle extends StartedService,
>(name: N, load: () => Promise<ApsService<N, Cfg, Handle>>, env: NodeJS.ProcessEnv = process.env): Promise<Handle> {
  await startTelemetry(name);
  const platform = await import("./index.js");
  const service = await load();
  const cfg = service.loadConfig(env);
  if (env.APS_MIGRATE_ONLY === "1") return migrateAndExit(name, service, cfg);
  const addrs = cfg as unknown as Record<string, string>;
  // its listen port held before any outbound connection can be given it (docs/design/services.md#port-reservation)
  await platform.reserveListenPort(
    name === platform.GATEWAY.name
      ? `${addrs.HOST ?? "0.0.0.0"}:${addrs.PORT ?? ""}`
      : (addrs[platform.listenAddrEnv(name)] ?? ""),
  );
  const log = platform.createLogger(name, cfg.LOG_LEVEL);
  const targets = Object.fromEntries(
    platform.dependenciesOf(name).map((d) => [d, addrs[platform.grpcAddrEnv(d)]]),
  ) as Parameters<typeof service.start>[0]["targets"];
  const handle = await service.start({ cfg, log, clock: platform.systemClock, targets });
  const metrics =
    service.standalone?.metricsServer === false
      ? undefined
      : await platform.startMetricsServer(platform.metricsPortFromEnv(env), log);
  service.standalone?.announce?.(handle, log);
  platform.onShutdown(log, async () => {
    await handle.stop();
    await metrics?.stop();
  });
  return handle;
}

/**
 * The migration job (`APS_MIGRATE_ONLY=1`, docs/operations/upgrading.md; the chart's pre-upgrade
 * hook Job per schema owner): applies the service's migrations and SQL functions
 * (ApsService.migrate) and exits 0 — no listen port, no bus, no server; a service without a schema
 * of its own says so and exits 0. Never resolves; a failed migration rejects (the process exits non-zero).
 */
async function migrateAndExit<N extends DeployableName, Cfg extends { LOG_LEVEL: string }, H extends StartedService>(
  name: N,
  service: ApsService<N, Cfg, H>,
  cfg: Cfg,
): Promise<never> {
  const platform = await import("./index.js");
  const log = platform.createLogger(name, cfg.LOG_LEVEL);
  const t0 = Date.now();
  if (service.migrate) {
    await service.migrate({ cfg, log });
    log.info({ ms: Date.now() - t0 }, "migrations and SQL functions applied (APS_MIGRATE_ONLY)");
  } else log.info("no schema of its own: nothing to migrate (APS_MIGRATE_ONLY)");
  await platform.shutdownTelemetry();
  process.exit(0);
}
