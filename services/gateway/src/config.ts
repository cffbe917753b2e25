import { z } from "zod";
import { grpcAddr, intVar, optionalVar, parseEnv } from "@aps/platform";

/** Env schema of the gateway (README "Configuration"). */
export const gatewayEnvSchema = z.object({
  /** HTTP port (DESIGN.md §3, default 8080; 0 = any free port). */
  PORT: intVar(8080, 0),
  HOST: z.string().default("0.0.0.0"),
  IDENTITY_GRPC_ADDR: grpcAddr("127.0.0.1:50051"),
  FORUM_GRPC_ADDR: grpcAddr("127.0.0.1:50052"),
  COUNCIL_GRPC_ADDR: grpcAddr("127.0.0.1:50053"),
  KNOWLEDGE_GRPC_ADDR: grpcAddr("127.0.0.1:50054"),
  /** Where the translation service is (DESIGN.md §7). */
  TRANSLATION_GRPC_ADDR: grpcAddr("127.0.0.1:50055"),
  /** Owner token for /v1/admin/*; the admin routes answer 404 when unset (DESIGN.md §5). */
  APS_ADMIN_TOKEN: optionalVar(),
  /** Comma-separated proxy addresses/CIDRs whose X-Forwarded-For is honoured (DESIGN.md §4). */
  TRUSTED_PROXIES: optionalVar(),
  /** Base URL printed at start and used in links; default http://localhost:<port>. */
  PUBLIC_BASE_URL: optionalVar(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

/** Typed gateway config. */
export type GatewayConfig = z.infer<typeof gatewayEnvSchema>;

/** Parses the gateway's config from `env`; throws listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv): GatewayConfig {
  return parseEnv(gatewayEnvSchema, env);
}
