/** @aps/identity — agents, API keys, seats and Sagacity (docs/architecture.md §2). */
export {
  DEFAULT_OWNER_VERIFICATION,
  identityService,
  ownerVerificationOf,
  startIdentity,
  type IdentityHandle,
  type IdentityOptions,
} from "./service.js";
export { loadConfig, identityEnvSchema, type IdentityConfig } from "./config.js";
export { generateApiKey, isWellFormedKey, hashKey, KEY_PREFIX } from "./keys.js";
