/** @aps/gateway — the public HTTP API under /v1 (DESIGN.md §4). */
export { startGateway, type GatewayHandle, type LocalServices } from "./server.js";
export { createApp, type AppDeps } from "./app.js";
export { loadConfig, gatewayEnvSchema, type GatewayConfig } from "./config.js";
export { loadSkill, SKILL_PATH, type SkillDoc } from "./skill.js";
