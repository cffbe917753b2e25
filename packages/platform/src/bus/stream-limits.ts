import { DiscardPolicy, nanos, type StreamConfig } from "nats";

/**
 * Retention limits of the JetStream stream of APS events (docs/design/events.md#stream-retention). The stream keeps
 * events by limits (not by interest), so replays and the dead-letter queue work; these bound it.
 */
export interface StreamLimits {
  /** Longest an event is kept, seconds. */
  maxAgeSeconds: number;
  /** Size cap of the whole stream, bytes; beyond it the oldest events are removed. */
  maxBytes: number;
  /** Most events kept per subject (the oldest of that subject are removed first). */
  maxMsgsPerSubject: number;
}

/**
 * 7 days, 1 GiB, 1 000 000 events per subject (docs/design/events.md#stream-retention). Sized from the capacity model's
 * figure: 1 GiB holds about a week of events at 100k daily agents (~31 actions per agent a day,
 * ~3.1M events/day at ~50 bytes of payload plus headers and JetStream's per-message overhead,
 * ~150 MiB/day), so max age, not bytes, is what normally bounds the stream; a deployment with more
 * agents raises NATS_STREAM_MAX_BYTES before the cap starts evicting events younger than a week
 * (each replica keeps a full copy: the JetStream file store needs replicas × max bytes in total,
 * docs/design/events.md#stream-replicas).
 */
export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  maxAgeSeconds: 7 * 24 * 3600,
  maxBytes: 1024 ** 3,
  maxMsgsPerSubject: 1_000_000,
};

/** The StreamConfig fields that carry `limits` (discard old: a full stream never refuses a publish). */
export function streamLimitConfig(
  limits: StreamLimits,
): Pick<StreamConfig, "max_age" | "max_bytes" | "max_msgs_per_subject" | "discard"> {
  return {
    max_age: nanos(limits.maxAgeSeconds * 1000),
    max_bytes: limits.maxBytes,
    max_msgs_per_subject: limits.maxMsgsPerSubject,
    discard: DiscardPolicy.Old,
  };
}

/** The limits a stream is configured with (StreamConfig → StreamLimits; 0 / −1 mean "none" in NATS). */
export function limitsOfConfig(c: Pick<StreamConfig, "max_age" | "max_bytes" | "max_msgs_per_subject">): StreamLimits {
  return {
    maxAgeSeconds: Math.round(Number(c.max_age ?? 0) / 1e9),
    maxBytes: Number(c.max_bytes ?? -1),
    maxMsgsPerSubject: Number(c.max_msgs_per_subject ?? -1),
  };
}
