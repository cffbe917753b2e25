import { pino, type Logger } from "pino";

export type { Logger };

/**
 * A JSON (pino) logger for one service. Authorization headers, API keys and bodies are redacted
 * wherever they appear under the usual field names (DESIGN.md §9: never a key or a body).
 */
export function createLogger(service: string, level: string = process.env.LOG_LEVEL ?? "info"): Logger {
  return pino({
    name: service,
    level,
    base: { service },
    redact: {
      paths: ["apiKey", "*.apiKey", "api_key", "*.api_key", "authorization", "*.authorization", "req.headers.authorization", "body", "*.body"],
      censor: "[redacted]",
    },
  });
}
