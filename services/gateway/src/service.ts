import { migrateSchema, type ApsService, type ServiceName } from "@aps/platform";
import { loadConfig, type GatewayConfig } from "./config.js";
import { GATEWAY_SCHEMA, MIGRATIONS_DIR, startGateway, type GatewayHandle, type LocalServices } from "./server.js";

/**
 * The HTTP gateway as every launcher runs it (docs/design/services.md#one-service-contract): its config as it is (the all-in-one
 * passes the env it was given, so its rate-limit counters stay in the process unless a database
 * is named, docs/design/identity-and-abuse.md#per-minute-request-limits), the context's bus for cache invalidation when NATS_URL is unset
 * (docs/design/edge.md#authentication-cache), and the services it calls: each target that is an in-process endpoint is
 * called in-process (docs/design/services.md#in-process-transport), the others at their `*_GRPC_ADDR`. On its own it serves its
 * own `/metrics` (docs/design/operations.md#metrics) and prints `APS gateway ready at <baseUrl>`.
 */
export const gatewayService: ApsService<"gateway", GatewayConfig, GatewayHandle> = {
  name: "gateway",
  loadConfig,
  // no database URL: no schema (its counters stay in the process), nothing to migrate
  migrate: ({ cfg, log }) =>
    cfg.databaseUrl ? migrateSchema(GATEWAY_SCHEMA, cfg, log, [MIGRATIONS_DIR]) : Promise.resolve(),
  start: (ctx) => {
    const local: LocalServices = {};
    for (const [name, target] of Object.entries(ctx.targets) as [ServiceName, unknown][])
      if (typeof target !== "string") Object.assign(local, { [name]: target });
    // the all-in-one's database keeps the OAuth grants when the gateway has none of its own
    return startGateway(ctx.cfg, ctx.log, { bus: ctx.bus, local, databaseUrl: ctx.databaseUrl, clock: ctx.clock });
  },
  standalone: {
    metricsServer: false,
    announce: (gw, log) => {
      log.info({ baseUrl: gw.baseUrl }, "gateway ready");
      console.log(`APS gateway ready at ${gw.baseUrl}`);
    },
  },
};
