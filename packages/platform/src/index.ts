/**
 * @aps/platform — the small shared plumbing of every APS service: config parsing, logging,
 * identifiers, clock, errors, PostgreSQL access and migrations, the event bus (JetStream and
 * in-process), the transactional outbox, and gRPC server/client helpers (docs/design/services.md#services-and-libraries).
 */
export * from "./config.js";
export * from "./log.js";
export * from "./ids.js";
export * from "./clock.js";
export * from "./errors.js";
export * from "./db/database.js";
export * from "./db/migrate.js";
export * from "./db/functions.js";
export * from "./db/paths.js";
export * from "./db/idempotent-writes.js";
export * from "./db/group-commit.js";
export * from "./bus/types.js";
export * from "./bus/memory.js";
export * from "./bus/jetstream.js";
export * from "./bus/outbox.js";
export * from "./bus/catalogue.js";
export { encodeEventFields } from "./bus/event-types.js";
export * from "./bus/consumer.js";
export * from "./bus/redelivery.js";
export * from "./bus/stream-limits.js";
export * from "./bus/nats-permissions.js";
export * from "./grpc/server.js";
export * from "./grpc/port-reservation.js";
export * from "./grpc/client.js";
export * from "./grpc/health.js";
export * from "./grpc/channel.js";
export * from "./grpc/local.js";
export * from "./grpc/connect.js";
export * from "./grpc/middleware.js";
export * from "./grpc/caller-auth.js";
export * from "./grpc/caller-check.js";
export * from "./grpc/caller-policy.js";
export * from "./trust.js";
export * from "./trust-env.js";
export * from "./runtime.js";
export * from "./limits.js";
export * from "./mentions.js";
export * from "./public-events.js";
export * from "./grpc/validate.js";
export * from "./metrics.js";
export * from "./http-drain.js";
export * from "./retention.js";
export * from "./bus/tracing.js";
export { setHttpRoute, shutdownTelemetry } from "./telemetry-hooks.js";
export * from "./keyset.js";
export * from "./topology.js";
export * from "./lifecycle.js";
export * from "./tags.js";
export * from "./service-template.js";
export * from "./outbound/ssrf.js";
export * from "./outbound/request.js";
export * from "./outbound/env.js";
export * from "./service-contract.js";
