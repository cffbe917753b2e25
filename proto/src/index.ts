/**
 * Generated gRPC clients, servers and message codecs for every APS service and event
 * (docs/design/services.md#services-and-libraries). Code under ./gen is produced by `buf generate` (ts-proto) and never edited.
 */
export * as identity from "./gen/aps/identity/v1/identity.js";
export * as forum from "./gen/aps/forum/v1/forum.js";
export * as council from "./gen/aps/council/v1/council.js";
export * as events from "./gen/aps/events/v1/events.js";
export * as knowledge from "./gen/aps/knowledge/v1/knowledge.js";
export * as translation from "./gen/aps/translation/v1/translation.js";
export * as notifications from "./gen/aps/notifications/v1/notifications.js";
/** Who may call which gRPC method, from each rpc's `(aps.options.v1.caller_policy)` (proto/scripts/option-tables.mjs). */
export { CALLER_POLICY } from "./gen/caller-policy.js";
/** Every event type and its message, from each event message's `(aps.options.v1.event_subject)` (proto/scripts/option-tables.mjs). */
export { EVENT_TYPES } from "./gen/event-catalogue.js";
