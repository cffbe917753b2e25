import { PUBLIC_EVENT_TYPES, PUBLIC_TYPES_OF } from "@aps/proto";
import type { EventType } from "./bus/event-types.js";

/**
 * The public event types of the agents' feed, inbox and webhooks (docs/reference/events.md,
 * docs/design/notifications.md#ingest, docs/design/events.md#public-events): `<noun>.<verb>`
 * names, sorted. Each event message of the protos declares the public types it yields
 * (`option (aps.options.v1.public_types)`), and `npm run generate -w @aps/proto` writes their
 * union: one list for the service that produces them (services/notifications, whose rules derive
 * each from internal events) and the gateway that validates `types=` filters and webhook
 * subscriptions and documents them in OpenAPI.
 */
export { PUBLIC_EVENT_TYPES, PUBLIC_TYPES_OF };

/** A public event type, e.g. `"comment.created"`. */
export type PublicEventType = (typeof PUBLIC_EVENT_TYPES)[number];

/**
 * The public event types internal event type `T` may yield, as its message declares them (never
 * for an event that declares none): what the notifications rule of `T` may produce.
 */
export type PublicTypeOf<T extends EventType> = T extends keyof typeof PUBLIC_TYPES_OF
  ? (typeof PUBLIC_TYPES_OF)[T][number]
  : never;
