import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context } from "@opentelemetry/api";
import type { BusEvent } from "./types.js";
import { consumerDeliveries, consumerFailures } from "../metrics.js";

/**
 * W3C trace context across the bus (docs/design/events.md#path-of-an-event, docs/design/operations.md#at-a-glance): the outbox records the context active at
 * enqueue time, the relay publishes under a PRODUCER span parented to it, and each consumer
 * handles the event under a CONSUMER span parented to the producer's. Attribute names follow the
 * OpenTelemetry messaging semantic conventions. Without an SDK every span here is a no-op.
 */
const tracer = trace.getTracer("@aps/platform/bus");

/** The active trace context as W3C headers (`traceparent`, `tracestate`); empty outside a trace. */
export function traceHeaders(ctx: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

function extract(headers: Record<string, string>): Context {
  return propagation.extract(ROOT_CONTEXT, headers);
}

/**
 * Runs `fn` in the trace context that `headers` carry (W3C `traceparent`/`tracestate`, as
 * `traceHeaders` wrote them): one item of a call made on behalf of several requests, e.g. a vote
 * of a CastVotes batch (docs/design/votes-and-heat.md#gateway-batching), so what it records joins its own request's trace. Without
 * a `traceparent` (no SDK, or none sent) `fn` runs in the active context.
 */
export function withTraceHeaders<T>(headers: Readonly<Record<string, string>>, fn: () => T): T {
  if (!headers["traceparent"]) return fn();
  return context.with(extract({ ...headers }), fn);
}

/**
 * Runs `publish` under a PRODUCER span `<subject> publish` parented to the trace recorded in
 * `event.headers`, and hands it the headers to send (with this span's traceparent).
 */
export async function withProducerSpan(
  event: BusEvent,
  publish: (headers: Record<string, string>) => Promise<void>,
): Promise<void> {
  return tracer.startActiveSpan(
    `${event.subject} publish`,
    {
      kind: SpanKind.PRODUCER,
      attributes: {
        "messaging.system": "nats",
        "messaging.operation.type": "send",
        "messaging.operation.name": "publish",
        "messaging.destination.name": event.subject,
        "messaging.message.id": event.eventId,
      },
    },
    extract(event.headers),
    async (span) => {
      try {
        // This span's context replaces the recorded one; without an SDK the recorded one stays.
        await publish({ ...event.headers, ...traceHeaders() });
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

/**
 * Runs one delivery of `event` to the durable consumer `durable` under a CONSUMER span
 * `<subject> process` parented to the publisher's context, and counts it (deliveries/failures).
 */
export async function withConsumerSpan<T>(
  event: BusEvent,
  durable: string,
  deliveryCount: number,
  handle: () => Promise<T>,
): Promise<T> {
  consumerDeliveries.inc({ durable });
  return tracer.startActiveSpan(
    `${event.subject} process`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        "messaging.system": "nats",
        "messaging.operation.type": "process",
        "messaging.operation.name": "process",
        "messaging.destination.name": event.subject,
        "messaging.message.id": event.eventId,
        "messaging.consumer.group.name": durable,
        "messaging.nats.delivery_count": deliveryCount,
      },
    },
    extract(event.headers),
    async (span) => {
      try {
        return await handle();
      } catch (err) {
        consumerFailures.inc({ durable });
        span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}
