import { createLogger } from "@aps/platform";
import { loadConfig } from "./config.js";
import { engineFromConfig, wantsDatabase } from "./service.js";
import { postgresAvailable, postgresTestIndex } from "./store/postgres.fixture.js";

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

const pgUp = await postgresAvailable();

describe("knowledge engine choice with a database (docs/design/search-and-translation.md#the-postgresql-engine)", () => {
  it("wants a database unless Meilisearch or a MiniSearch folder is configured; KNOWLEDGE_DATABASE_URL is read", () => {
    expect(wantsDatabase(loadConfig({}))).toBe(true);
    expect(wantsDatabase(loadConfig({ MEILISEARCH_URL: "http://127.0.0.1:7700" }))).toBe(false);
    expect(wantsDatabase(loadConfig({ KNOWLEDGE_INDEX_DIR: "/tmp/x" }))).toBe(false);
    expect(loadConfig({ KNOWLEDGE_DATABASE_URL: "postgres://k@db/aps" }).KNOWLEDGE_DATABASE_URL).toBe(
      "postgres://k@db/aps",
    );
  });

  it("KNOWLEDGE_ENGINE=postgres (the chart's search.engine: postgres) takes DATABASE_URL, and refuses no URL or Meilisearch too", () => {
    expect(loadConfig({ DATABASE_URL: "postgres://a@db/aps" }).indexDatabaseUrl).toBeUndefined();
    expect(loadConfig({ KNOWLEDGE_ENGINE: "postgres", DATABASE_URL: "postgres://a@db/aps" }).indexDatabaseUrl).toBe(
      "postgres://a@db/aps",
    );
    expect(
      loadConfig({
        KNOWLEDGE_ENGINE: "postgres",
        DATABASE_URL: "postgres://a@db/aps",
        KNOWLEDGE_DATABASE_URL: "postgres://k@db/aps",
      }).indexDatabaseUrl,
    ).toBe("postgres://k@db/aps");
    expect(() => loadConfig({ KNOWLEDGE_ENGINE: "postgres" })).toThrow(/needs KNOWLEDGE_DATABASE_URL or DATABASE_URL/);
    expect(() =>
      loadConfig({
        KNOWLEDGE_ENGINE: "postgres",
        DATABASE_URL: "postgres://a@db/aps",
        MEILISEARCH_URL: "http://m:7700",
      }),
    ).toThrow(/choose one engine/);
  });

  (pgUp ? it : it.skip)(
    pgUp
      ? "uses the PostgreSQL index when given a database, Meilisearch still first"
      : "uses the PostgreSQL index when given a database (SKIPPED: no PostgreSQL)",
    async () => {
      const index = await postgresTestIndex();
      try {
        const store = { db: index.db, log: createLogger("knowledge-test", "warn") };
        expect(engineFromConfig(loadConfig({}), store).name).toBe("postgres");
        expect(engineFromConfig(loadConfig({ MEILISEARCH_URL: "http://127.0.0.1:7700" }), store).name).toBe(
          "meilisearch",
        );
      } finally {
        await index.drop();
      }
    },
  );
});
