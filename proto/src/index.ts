/**
 * Generated gRPC clients, servers and message codecs for every APS service and event
 * (docs/design/services.md#services-and-libraries). Code under ./gen is produced by `buf generate` (ts-proto) and never edited.
 */
export * as identity from "./gen/aps/identity/v1/identity.js";
export * as forum from "./gen/aps/forum/v1/forum.js";
export * as council from "./gen/aps/council/v1/council.js";
export * as knowledge from "./gen/aps/knowledge/v1/knowledge.js";
export * as translation from "./gen/aps/translation/v1/translation.js";
export * as notifications from "./gen/aps/notifications/v1/notifications.js";
/**
 * From the schema's options (proto/scripts/option-tables.mjs): who may call which gRPC method (each
 * rpc's `(aps.options.v1.caller_policy)`), every event type and its message (each event message's
 * `(aps.options.v1.event_subject)`, in its publisher's .proto), and `events`, those messages by name
 * (`events.VoteCast.decode(…)`; docs/design/events.md#catalogue).
 */
export {
  CALLER_POLICY,
  EVENT_TYPES,
  EVENT_MESSAGES as events,
  PUBLIC_EVENT_TYPES,
  PUBLIC_TYPES_OF,
} from "./gen/option-tables.js";
