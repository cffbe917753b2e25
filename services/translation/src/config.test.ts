import { loadConfig, translationQuotas } from "./config.js";
import { engineFromConfig } from "./engines/index.js";

describe("translation loadConfig(env)", () => {
  it("applies the defaults: port 50055, no engine, quota 100, timeout 20 s", () => {
    const c = loadConfig({});
    expect(c.TRANSLATION_LISTEN_ADDR).toBe("0.0.0.0:50055");
    expect(c.FORUM_GRPC_ADDR).toBe("127.0.0.1:50052");
    expect(c.TRANSLATION_ENGINE).toBeUndefined();
    expect(c.TRANSLATION_DAILY_QUOTA).toBe(100);
    expect(c.TRANSLATION_TIMEOUT_MS).toBe(20_000);
    expect(c.databaseUrl).toBeUndefined();
    expect(engineFromConfig(c)).toBeUndefined();
    expect(engineFromConfig(loadConfig({ TRANSLATION_ENGINE: "" }))).toBeUndefined();
  });

  it("chooses each engine from TRANSLATION_ENGINE and its URL", () => {
    expect(
      engineFromConfig(loadConfig({ TRANSLATION_ENGINE: "apertium", APERTIUM_URL: "http://127.0.0.1:2737" }))?.name,
    ).toBe("apertium");
    expect(
      engineFromConfig(
        loadConfig({
          TRANSLATION_ENGINE: "libretranslate",
          LIBRETRANSLATE_URL: "http://lt:5000",
          LIBRETRANSLATE_API_KEY: "k",
        }),
      )?.name,
    ).toBe("libretranslate");
    const o = loadConfig({
      TRANSLATION_ENGINE: "openai",
      OPENAI_BASE_URL: "http://llm:8000/v1",
      OPENAI_MODEL: "qwen2.5",
    });
    expect(o.OPENAI_MODEL).toBe("qwen2.5");
    expect(engineFromConfig(o)?.name).toBe("openai");
    expect(loadConfig({ TRANSLATION_DATABASE_URL: "postgres://a/b", DATABASE_URL: "postgres://c/d" }).databaseUrl).toBe(
      "postgres://a/b",
    );
  });

  it("rejects an unknown engine, an engine without its URL, a bad quota or timeout, a bad listen address", () => {
    expect(() => loadConfig({ TRANSLATION_ENGINE: "google" })).toThrow(/TRANSLATION_ENGINE/);
    expect(() => loadConfig({ TRANSLATION_ENGINE: "apertium" })).toThrow(/APERTIUM_URL/);
    expect(() => loadConfig({ TRANSLATION_ENGINE: "libretranslate" })).toThrow(/LIBRETRANSLATE_URL/);
    expect(() => loadConfig({ TRANSLATION_ENGINE: "openai" })).toThrow(/OPENAI_BASE_URL/);
    expect(() => loadConfig({ TRANSLATION_DAILY_QUOTA: "-1" })).toThrow(/TRANSLATION_DAILY_QUOTA/);
    expect(() => loadConfig({ TRANSLATION_TIMEOUT_MS: "0" })).toThrow(/TRANSLATION_TIMEOUT_MS/);
    expect(() => loadConfig({ TRANSLATION_LISTEN_ADDR: "nope" })).toThrow(/TRANSLATION_LISTEN_ADDR/);
  });

  it("the per-source and deployment budgets: 5 × the key's quota and 10 000 unless set (docs/design/identity-and-abuse.md#budgets-per-source)", () => {
    expect(translationQuotas(loadConfig({}))).toEqual({ dailyQuota: 100, sourceQuota: 500, globalQuota: 10_000 });
    expect(
      translationQuotas(loadConfig({ TRANSLATION_DAILY_QUOTA: "4", TRANSLATION_DAILY_QUOTA_PER_SOURCE: "" })),
    ).toEqual({ dailyQuota: 4, sourceQuota: 20, globalQuota: 10_000 });
    expect(
      translationQuotas(loadConfig({ TRANSLATION_DAILY_QUOTA_PER_SOURCE: "7", TRANSLATION_DAILY_QUOTA_GLOBAL: "0" })),
    ).toEqual({ dailyQuota: 100, sourceQuota: 7, globalQuota: 0 });
    expect(() => loadConfig({ TRANSLATION_DAILY_QUOTA_PER_SOURCE: "-1" })).toThrow(
      /TRANSLATION_DAILY_QUOTA_PER_SOURCE/,
    );
    expect(() => loadConfig({ TRANSLATION_DAILY_QUOTA_GLOBAL: "many" })).toThrow(/TRANSLATION_DAILY_QUOTA_GLOBAL/);
  });
});
