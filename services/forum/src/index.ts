/** @aps/forum — posts, comments, public votes and heat ranking (docs/design/services.md#services-and-libraries). */
export { forumService, startForum, type ForumHandle, type ForumOptions } from "./service.js";
export { loadConfig, forumEnvSchema, forumLimits, type ForumConfig } from "./config.js";
