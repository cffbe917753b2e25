import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { ensureBuilt } from "@aps/testkit";

/**
 * `startTelemetry` loads the OpenTelemetry SDK only when tracing is on (docs/design/operations.md#traces): a process
 * without an OTLP endpoint — `npm start` on its defaults — does not carry the SDK, its
 * instrumentations and exporters in memory. Checked in a fresh Node process (jest's module
 * registry is not Node's): which CommonJS modules of `@opentelemetry/sdk-node` are loaded after
 * the call.
 */
const dist = fileURLToPath(new URL("../dist/telemetry.js", import.meta.url));
beforeAll(() => ensureBuilt("@aps/platform"), 120_000);
const probe = (env: Record<string, string>) =>
  execFileSync(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `import { createRequire } from "node:module";
       const { startTelemetry, shutdownTelemetry } = await import(${JSON.stringify(dist)});
       const on = await startTelemetry("probe");
       const loaded = Object.keys(createRequire(import.meta.url).cache).some((p) => p.includes("/@opentelemetry/sdk-node/"));
       console.log(JSON.stringify({ on, loaded }));
       await shutdownTelemetry();`,
    ],
    { env: { PATH: process.env.PATH ?? "", ...env }, encoding: "utf8" },
  ).trim();

describe("startTelemetry loads the SDK only when tracing is on", () => {
  it("no OTLP endpoint: tracing off, SDK not loaded", () => {
    expect(JSON.parse(probe({}))).toEqual({ on: false, loaded: false });
  });
  it("OTEL_SDK_DISABLED=true: tracing off, SDK not loaded", () => {
    expect(JSON.parse(probe({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_SDK_DISABLED: "true" }))).toEqual(
      { on: false, loaded: false },
    );
  });
  it("an endpoint: tracing on, SDK loaded", () => {
    expect(JSON.parse(probe({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" }))).toEqual({
      on: true,
      loaded: true,
    });
  });
});
