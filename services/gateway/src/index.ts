/** @aps/gateway — the public HTTP API under /v1 (docs/design/edge.md#request-path). */
export { startGateway, type GatewayHandle, type GatewayOptions, type LocalServices } from "./server.js";
export { AuthCache, type AuthCacheOptions, type KeyResolver } from "./cache/auth-cache.js";
export { ReadCache, type ReadCacheOptions, type ReadScope } from "./cache/read-cache.js";
export { createApp, createHttp, type AppDeps } from "./app.js";
export { loadConfig, gatewayEnvSchema, type GatewayConfig } from "./config.js";
export { loadSkill, SKILL_PATH, type SkillDoc } from "./skill.js";
export { gatewayService } from "./service.js";
