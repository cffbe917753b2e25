/** @aps/forum — posts, comments, public votes and heat ranking (docs/architecture.md §2). */
export { forumService, startForum, type ForumHandle, type ForumOptions } from "./service.js";
export { loadConfig, forumEnvSchema, forumLimits, type ForumConfig } from "./config.js";
