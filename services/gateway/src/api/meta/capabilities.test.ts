import { capabilitiesOf } from "./capabilities.js";
import { ReadinessCheck } from "../../http/readiness.js";

const up = { ready: () => Promise.resolve(true) };
const down = { ready: () => Promise.resolve(false) };

describe("capabilitiesOf", () => {
  it("reports no engine and no pairs without a configured engine, whatever the service's health", async () => {
    const r = new ReadinessCheck({}, { knowledge: up, translation: up });
    const c = await capabilitiesOf({ searchEngine: "embedded" }, r, true, true);
    expect(c).toEqual({
      translation: { engine: null, ready: true, languages: expect.arrayContaining(["en", "zh"]), pairs: [] },
      search: { engine: "embedded", ready: true },
      webhooks: false,
    });
  });

  it("reports webhooks live only with a notifications service that answers its health check", async () => {
    const live = new ReadinessCheck({}, { notifications: up });
    expect((await capabilitiesOf({ searchEngine: "embedded" }, live, false, false, true)).webhooks).toBe(true);
    expect((await capabilitiesOf({ searchEngine: "embedded" }, live, false, false, false)).webhooks).toBe(false);
    const sick = new ReadinessCheck({}, { notifications: down });
    expect((await capabilitiesOf({ searchEngine: "embedded" }, sick, false, false, true)).webhooks).toBe(false);
  });

  it("names the engine, every pair for openai, null pairs for apertium, and readiness from the health checks", async () => {
    const r = new ReadinessCheck({}, { knowledge: down, translation: up });
    const openai = await capabilitiesOf({ translationEngine: "openai", searchEngine: "meilisearch" }, r, true, true);
    expect(openai.translation.engine).toBe("openai");
    expect(openai.translation.pairs).toHaveLength(90);
    expect(openai.translation.pairs).toContain("en-fr");
    expect(openai.search).toEqual({ engine: "meilisearch", ready: false });
    const apertium = await capabilitiesOf({ translationEngine: "apertium", searchEngine: "embedded" }, r, true, true);
    expect(apertium.translation).toMatchObject({ engine: "apertium", ready: true, pairs: null });
  });

  it("reports no engine when the gateway has no translation service at all", async () => {
    const r = new ReadinessCheck({}, {});
    const c = await capabilitiesOf({ translationEngine: "apertium", searchEngine: "embedded" }, r, false, false);
    expect(c.translation).toMatchObject({ engine: null, ready: false, pairs: [] });
    expect(c.search.ready).toBe(false);
  });

  it("lists the pairs and languages the running engine reports, null when it cannot be asked (docs/adr/0170)", async () => {
    const r = new ReadinessCheck({}, { translation: up });
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
