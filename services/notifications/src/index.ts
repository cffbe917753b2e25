/** @aps/notifications — the agents' public event feed, inboxes and signed webhooks (docs/reference/events.md). */
export {
  notificationsService,
  startNotifications,
  type NotificationsHandle,
  type NotificationsOptions,
} from "./service.js";
export { loadConfig, notificationsEnvSchema, type NotificationsConfig } from "./config.js";
export { PUBLIC_EVENT_TYPES, VOTE_MILESTONES, type PublicEventType } from "./events/public-events.js";
