import { capabilitiesOf } from "./capabilities.js";
import type { ReadinessSource } from "./capabilities.js";

const up = true;
const down = false;

/** A readiness whose dependencies answered their health checks as given (the gateway's ReadinessCheck reports the same shape). */
function readiness(dependencies: Record<string, boolean>): ReadinessSource {
  return { get: () => Promise.resolve({ dependencies }) };
}

describe("capabilitiesOf", () => {
  it("reports no engine and no pairs without a configured engine, whatever the service's health", async () => {
    const r = readiness({ knowledge: up, translation: up });
    const c = await capabilitiesOf({ searchEngine: "embedded" }, r, true, true);
    expect(c).toEqual({
      translation: { engine: null, ready: true, languages: expect.arrayContaining(["en", "zh"]), pairs: [] },
      search: { engine: "embedded", ready: true },
      webhooks: false,
    });
  });

  it("reports webhooks live only with a notifications service that answers its health check", async () => {
    const live = readiness({ notifications: up });
    expect((await capabilitiesOf({ searchEngine: "embedded" }, live, false, false, true)).webhooks).toBe(true);
    expect((await capabilitiesOf({ searchEngine: "embedded" }, live, false, false, false)).webhooks).toBe(false);
    const sick = readiness({ notifications: down });
    expect((await capabilitiesOf({ searchEngine: "embedded" }, sick, false, false, true)).webhooks).toBe(false);
  });

  it("names the engine, every pair for openai, null pairs for apertium, and readiness from the health checks", async () => {
    const r = readiness({ knowledge: down, translation: up });
    const openai = await capabilitiesOf({ translationEngine: "openai", searchEngine: "meilisearch" }, r, true, true);
    expect(openai.translation.engine).toBe("openai");
    expect(openai.translation.pairs).toHaveLength(90);
    expect(openai.translation.pairs).toContain("en-fr");
    expect(openai.search).toEqual({ engine: "meilisearch", ready: false });
    const apertium = await capabilitiesOf({ translationEngine: "apertium", searchEngine: "embedded" }, r, true, true);
    expect(apertium.translation).toMatchObject({ engine: "apertium", ready: true, pairs: null });
  });

  it("reports no engine when the gateway has no translation service at all", async () => {
    const r = readiness({});
    const c = await capabilitiesOf({ translationEngine: "apertium", searchEngine: "embedded" }, r, false, false);
    expect(c.translation).toMatchObject({ engine: null, ready: false, pairs: [] });
    expect(c.search.ready).toBe(false);
  });

  it("lists the pairs and languages the running engine reports, null when it cannot be asked (docs/design/edge.md#index-405-and-404)", async () => {
    const r = readiness({ translation: up });
    const cfg = { translationEngine: "apertium", searchEngine: "embedded" as const };
    const two = await capabilitiesOf(cfg, r, true, false, false, () =>
      Promise.resolve({ everyPair: false, known: true, pairs: ["en-es", "es-en"] }),
    );
    expect(two.translation).toMatchObject({ engine: "apertium", languages: ["en", "es"], pairs: ["en-es", "es-en"] });
    const down = await capabilitiesOf(cfg, r, true, false, false, () => Promise.reject(new Error("unavailable")));
    expect(down.translation.pairs).toBeNull();
    const every = await capabilitiesOf({ ...cfg, translationEngine: "openai" }, r, true, false, false, () =>
      Promise.resolve({ everyPair: true, known: true, pairs: [] }),
    );
    expect(every.translation.pairs).toHaveLength(90);
  });
});
