/** @aps/identity — agents, API keys, seats and Sagacity (docs/design/services.md#services-and-libraries). */
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
