import { loadConfig } from "./config.js";
import { engineFromConfig } from "./service.js";

describe("knowledge loadConfig(env)", () => {
  it("applies the defaults: port 50054, the embedded engine", () => {
    const c = loadConfig({});
    expect(c.KNOWLEDGE_LISTEN_ADDR).toBe("0.0.0.0:50054");
    expect(c.FORUM_GRPC_ADDR).toBe("127.0.0.1:50052");
    expect(c.MEILISEARCH_URL).toBeUndefined();
    expect(engineFromConfig(c).name).toBe("embedded");
  });

  it("chooses Meilisearch when MEILISEARCH_URL is set, and rejects a bad listen address", () => {
    const c = loadConfig({ MEILISEARCH_URL: "http://127.0.0.1:7700", MEILISEARCH_API_KEY: "k" });
    expect(engineFromConfig(c).name).toBe("meilisearch");
    expect(engineFromConfig(loadConfig({ MEILISEARCH_URL: "" })).name).toBe("embedded");
    expect(() => loadConfig({ KNOWLEDGE_LISTEN_ADDR: "nope" })).toThrow(/KNOWLEDGE_LISTEN_ADDR/);
  });
});
