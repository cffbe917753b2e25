import { status as GrpcStatus } from "@grpc/grpc-js";
import { ApsError } from "../errors.js";

/**
 * What a consumer does with an event whose handler failed (docs/design/events.md#redelivery): deliver it again after
 * an exponential backoff, or park it in the dead-letter queue. Only poison messages — ones that
 * can never succeed, whatever the state of the other services — are parked at once; a failure
 * caused by an outage (a service or database unreachable) is retried for as long as it lasts.
 */

/**
 * Thrown by a handler for an event it can never process (undecodable payload, a reference that
 * cannot exist): the event is parked in the dead-letter queue at once instead of being retried.
 */
export class PoisonEventError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PoisonEventError";
  }
}

/**
 * How a handler failure is classified:
 * - `transient`: an outage (network, gRPC UNAVAILABLE/DEADLINE_EXCEEDED/…, PostgreSQL connection
 *   or shutdown errors, serialization failures) — retried without limit;
 * - `poison`: the event itself is bad (PoisonEventError, protobuf decode errors, gRPC
 *   INVALID_ARGUMENT, PostgreSQL data or integrity errors, SQLSTATE classes 22/23) — parked at once;
 * - `unknown`: anything else (a bug) — retried up to `maxDeliver`, then parked.
 */
export type FailureKind = "transient" | "poison" | "unknown";

/** gRPC codes that mean "the callee could not answer now" (grpc.io status codes guide). */
const TRANSIENT_GRPC = new Set<number>([
  GrpcStatus.UNAVAILABLE,
  GrpcStatus.DEADLINE_EXCEEDED,
  GrpcStatus.RESOURCE_EXHAUSTED,
  GrpcStatus.ABORTED,
  GrpcStatus.CANCELLED,
]);
/** Node socket error codes of an unreachable peer. */
const TRANSIENT_ERRNO = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ECONNABORTED",
]);
/** Messages of node-postgres (pg-pool) when the server is gone or the pool cannot connect. */
const TRANSIENT_MESSAGE =
  /connection terminated|timeout exceeded when trying to connect|connection error|terminating connection|the database system is (starting up|shutting down)|Client was closed|Connection ended/i;
/** Messages of protobufjs when a payload does not decode. */
const DECODE_MESSAGE = /invalid wire type|index out of range|illegal tag|invalid varint|premature EOF/i;

/** Classifies a handler failure (see FailureKind); looks through `cause` chains. */
export function classifyFailure(err: unknown, depth = 0): FailureKind {
  if (err instanceof PoisonEventError) return "poison";
  if (typeof err !== "object" || err === null) return "unknown";
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; name?: unknown };
  const message = typeof e.message === "string" ? e.message : "";
  // ApsError codes raised through the platform clients (errors.ts)
  if (err instanceof ApsError) {
    if (e.code === "upstream_unavailable" || e.code === "rate_limited" || e.code === "quota_exceeded")
      return "transient";
    if (e.code === "invalid_request") return "poison";
  }
  if (typeof e.code === "number" && "details" in e) {
    if (TRANSIENT_GRPC.has(e.code)) return "transient";
    if (e.code === (GrpcStatus.INVALID_ARGUMENT as number)) return "poison";
  }
  if (typeof e.code === "string") {
    if (TRANSIENT_ERRNO.has(e.code)) return "transient";
    // SQLSTATE (PostgreSQL appendix A): 08 connection, 53 resources, 57 operator intervention
    // (admin shutdown, cannot connect now), 40001/40P01 serialization/deadlock, 55P03 lock timeout
    if (/^[0-9A-Z]{5}$/.test(e.code)) {
      const cls = e.code.slice(0, 2);
      if (
        cls === "08" ||
        cls === "53" ||
        cls === "57" ||
        e.code === "40001" ||
        e.code === "40P01" ||
        e.code === "55P03"
      )
        return "transient";
      if (cls === "22" || cls === "23") return "poison";
    }
  }
  if (TRANSIENT_MESSAGE.test(message)) return "transient";
  if (DECODE_MESSAGE.test(message)) return "poison";
  if (e.cause !== undefined && depth < 5) return classifyFailure(e.cause, depth + 1);
  return "unknown";
}

/** Backoff and limits of redelivery (docs/design/events.md#redelivery). */
export interface RedeliveryPolicy {
  /** Delay before the 2nd delivery, ms; doubles with each further one (default 1 000). */
  baseDelayMs: number;
  /** Longest delay between two deliveries, ms (default 60 000). */
  maxDelayMs: number;
  /** Deliveries of an event failing with `unknown` errors before it is parked (default 20, ≈ 15 min). */
  maxDeliver: number;
}

/** The defaults: 1 s, 2 s, 4 s, … capped at 60 s; unknown failures parked after 20 deliveries. */
export const DEFAULT_REDELIVERY: RedeliveryPolicy = { baseDelayMs: 1_000, maxDelayMs: 60_000, maxDeliver: 20 };

/** What to do after a failed delivery. */
export type RedeliveryDecision =
  { action: "retry"; delayMs: number; kind: FailureKind } | { action: "park"; kind: FailureKind };

/**
 * Decides what follows the failed delivery number `deliveryCount` (1 = first) of an event:
 * poison → park; transient → retry after min(maxDelay, base·2^(n−1)) ms, for ever; unknown →
 * the same backoff until `maxDeliver` deliveries, then park.
 */
export function decideRedelivery(
  err: unknown,
  deliveryCount: number,
  policy: RedeliveryPolicy = DEFAULT_REDELIVERY,
): RedeliveryDecision {
  const kind = classifyFailure(err);
  if (kind === "poison") return { action: "park", kind };
  if (kind === "unknown" && deliveryCount >= policy.maxDeliver) return { action: "park", kind };
  return { action: "retry", delayMs: backoffMs(deliveryCount, policy), kind };
}

/** min(maxDelayMs, baseDelayMs·2^(n−1)) for the failed delivery n ≥ 1, ms. */
export function backoffMs(deliveryCount: number, policy: RedeliveryPolicy = DEFAULT_REDELIVERY): number {
  const exp = Math.min(Math.max(deliveryCount - 1, 0), 30);
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** exp);
}

/** One event parked in the dead-letter queue (docs/design/events.md#redelivery). */
export interface ParkedEvent {
  /** Id within the queue (JetStream: the stream sequence of the dead-letter message), as text. */
  id: string;
  /** Durable consumer that parked it. */
  durable: string;
  /** Subject the event was published on. */
  subject: string;
  /** The event's id (`Nats-Msg-Id` of the original publish). */
  eventId: string;
  /** Deliveries made before parking. */
  deliveryCount: number;
  /** `poison` or `unknown` (see FailureKind). */
  kind: FailureKind;
  /** The last handler error, truncated to 500 characters. */
  error: string;
  /** When it was parked, ISO 8601. */
  parkedAt: string;
  /** Size of the payload, bytes. */
  payloadBytes: number;
}

/**
 * The dead-letter queue of a bus: parked events can be listed and replayed (published again on
 * their original subject with a new message id, then removed from the queue).
 */
export interface DeadLetterQueue {
  /** Parked events, oldest first, at most `limit` (default 100). */
  list(limit?: number): Promise<ParkedEvent[]>;
  /** Publishes the parked event `id` again and removes it; false when there is no such id. */
  replay(id: string): Promise<boolean>;
}

/** The last error as stored with a parked event: its message, ≤ 500 characters. */
export function errorText(err: unknown): string {
  return (err instanceof Error ? `${err.name}: ${err.message}` : String(err)).slice(0, 500);
}
