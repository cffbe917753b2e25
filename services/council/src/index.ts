/** @aps/council — cases, ballots, decisions, hand-off and completion (docs/design/council.md#statuses-and-the-lifecycle-rule). */
export { councilService, startCouncil, type CouncilHandle, type CouncilOptions } from "./service.js";
export { loadConfig, councilEnvSchema, type CouncilConfig } from "./config.js";
export { decisiveOutcome, deadlineOutcome, type Outcome } from "./rules.js";
