/**
 * The seam between the runtime and the (optional) OpenTelemetry SDK: `startTelemetry` registers
 * a flush here, `onShutdown` calls it, and nothing else of the platform loads the SDK.
 */
let flush: (() => Promise<void>) | undefined;

/** Registers the function that flushes and stops telemetry (one at a time). */
export function setTelemetryShutdown(fn: (() => Promise<void>) | undefined): void {
  flush = fn;
}

/** Flushes pending spans and stops the SDK; a no-op when telemetry is off. Never throws. */
export async function shutdownTelemetry(): Promise<void> {
  const fn = flush;
  flush = undefined;
  await fn?.().catch(() => undefined);
}

/** Names the current HTTP server span's route; set by `startTelemetry` while tracing is on. */
let routeNamer: ((route: string) => void) | undefined;

/** Registers (or clears) the function behind `setHttpRoute` (telemetry-sdk.ts, while the SDK runs). */
export function setHttpRouteNamer(fn: ((route: string) => void) | undefined): void {
  routeNamer = fn;
}

/**
 * Names the HTTP server span of the current request by its route template (`/v1/posts/:id`), as
 * `@opentelemetry/instrumentation-express` does when a route layer matches (the HTTP
 * instrumentation then sets `http.route` and the span's name from it). For requests answered
 * before routing: the read cache's shortcut (docs/design/edge.md#read-cache-shortcut). A no-op when tracing is off.
 */
export function setHttpRoute(route: string): void {
  routeNamer?.(route);
}
