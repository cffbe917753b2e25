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
