/** @aps/all-in-one — every APS service in one process on embedded defaults (docs/design/services.md#embedded-postgresql). */
export { startAllInOne, type AllInOne, type AllInOneOptions } from "./all-in-one.js";
export {
  startEmbeddedPostgres,
  ROOT_PLACES,
  type EmbeddedPostgres,
  type EmbeddedPostgresOptions,
  type RootPlaces,
} from "./embedded-postgres.js";
export { loadConfig, type AllInOneConfig } from "./config.js";
export {
  decideApertium,
  findOnPath,
  startApertium,
  withApertium,
  APY_PROGRAM,
  type ApertiumDecision,
  type ApertiumSettings,
  type RunningApertium,
} from "./apertium.js";
export { allInOneTrust, INTERNAL_TOKEN_FILE, type AllInOneTrust } from "./internal-token.js";
