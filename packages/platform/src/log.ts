import { pino, type DestinationStream, type Logger, type LoggerOptions } from "pino";
import { context, isSpanContextValid, trace } from "@opentelemetry/api";

export type { Logger };

/**
 * A JSON (pino) logger for one service. Authorization headers, API keys and bodies are redacted
 * wherever they appear under the usual field names (docs/design/operations.md#at-a-glance: never a key or a body). Inside a
 * trace every line carries `trace_id` and `span_id` of the active span. Lines go to stdout, or to
 * `destination` (tests capture them there).
 */
export function createLogger(
  service: string,
  level: string = process.env.LOG_LEVEL ?? "info",
  destination?: DestinationStream,
): Logger {
  const options: LoggerOptions<never, false> = {
    name: service,
    level,
    base: { service },
    mixin: traceIds,
    redact: {
      paths: [
        "apiKey",
        "*.apiKey",
        "api_key",
        "*.api_key",
        "authorization",
        "*.authorization",
        "req.headers.authorization",
        "body",
        "*.body",
      ],
      censor: "[redacted]",
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** `trace_id`/`span_id` of the active span, if any (the loggers' pino mixin). */
export function traceIds(): Record<string, string> {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const sc = span.spanContext();
  return isSpanContextValid(sc) ? { trace_id: sc.traceId, span_id: sc.spanId } : {};
}
