import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The bus is chosen in one place (docs/design/services.md#one-service-contract): `openEventBus` in
 * packages/platform/src/runtime.ts decides JetStream (with the stream's limits, replicas and ack
 * wait), the all-in-one's shared bus or a private in-process one, for every service. This guard
 * reads the non-test TypeScript sources of packages/ and services/ and fails when another file
 * connects to JetStream or makes an in-process bus itself (knowledge once had its own copy, which
 * left out NATS_STREAM_REPLICAS). The exceptions are listed with their reason.
 */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CHOOSES = /JetStreamBus\.connect\(|new InProcessBus\(/;
const ALLOWED: Record<string, string> = {
  "packages/platform/src/runtime.ts": "openEventBus itself",
  "services/gateway/src/server.ts":
    "the gateway only subscribes (cache invalidation): natsConnectionOf, no stream settings",
  "services/all-in-one/src/main.ts": "the all-in-one makes the one in-process bus its services share",
  "services/all-in-one/src/all-in-one.ts":
    "the sandbox beside the live instance gets an in-process bus of its own (docs/design/agents.md#sandbox)",
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === "node_modules" || e.name === "dist" || e.name === "gen") return [];
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") && !e.name.endsWith(".d.ts") ? [p] : [];
  });
}

describe("one choice of the event bus (docs/design/services.md#one-service-contract)", () => {
  it("only openEventBus (and the listed exceptions) connect to JetStream or make an in-process bus", () => {
    const files = ["packages", "services"].flatMap((top) =>
      readdirSync(join(ROOT, top)).flatMap((pkg) => {
        try {
          return sources(join(ROOT, top, pkg, "src"));
        } catch {
          return [];
        }
      }),
    );
    expect(files.length).toBeGreaterThan(100);
    const choosing = files
      .filter((f) => CHOOSES.test(readFileSync(f, "utf8")))
      .map((f) => relative(ROOT, f))
      .sort();
    expect(choosing).toEqual(Object.keys(ALLOWED).sort());
  });
});
