import { loadConfig } from "./config.js";

describe("gateway loadConfig(env)", () => {
  it("applies the documented defaults (docs/design/services.md#two-ways-to-run)", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ PORT: 8080, IDENTITY_GRPC_ADDR: "127.0.0.1:50051", FORUM_GRPC_ADDR: "127.0.0.1:50052" });
    expect(c.APS_ADMIN_TOKEN).toBeUndefined();
    expect(c).toMatchObject({ RATE_LIMIT_KEYED_PER_MINUTE: 600, RATE_LIMIT_ANON_PER_MINUTE: 300 });
    expect(c.databaseUrl).toBeUndefined();
    expect(c.HTTP_KEEP_ALIVE_TIMEOUT_MS).toBe(65_000); // docs/design/edge.md#connections-and-timeouts
    expect(loadConfig({ HTTP_KEEP_ALIVE_TIMEOUT_MS: "75000" }).HTTP_KEEP_ALIVE_TIMEOUT_MS).toBe(75_000);
    expect(() => loadConfig({ HTTP_KEEP_ALIVE_TIMEOUT_MS: "10" })).toThrow(/HTTP_KEEP_ALIVE_TIMEOUT_MS/);
  });

  it("reads the rate limits and the gateway's database (its own URL wins over DATABASE_URL)", () => {
    const c = loadConfig({
      RATE_LIMIT_KEYED_PER_MINUTE: "5",
      RATE_LIMIT_ANON_PER_MINUTE: "3",
      DATABASE_URL: "postgres://a/x",
      GATEWAY_DATABASE_URL: "postgres://b/y",
    });
    expect(c).toMatchObject({
      RATE_LIMIT_KEYED_PER_MINUTE: 5,
      RATE_LIMIT_ANON_PER_MINUTE: 3,
      databaseUrl: "postgres://b/y",
    });
    expect(loadConfig({ DATABASE_URL: "postgres://a/x" }).databaseUrl).toBe("postgres://a/x");
    expect(() => loadConfig({ RATE_LIMIT_KEYED_PER_MINUTE: "0" })).toThrow(/RATE_LIMIT_KEYED_PER_MINUTE/);
    expect(() => loadConfig({ RATE_LIMIT_ANON_PER_MINUTE: "many" })).toThrow(/RATE_LIMIT_ANON_PER_MINUTE/);
  });

  it("RATE_LIMIT_SOURCE_PER_MINUTE: 5 × the keyed limit unless set (docs/design/identity-and-abuse.md#budgets-per-source)", () => {
    expect(loadConfig({}).RATE_LIMIT_SOURCE_PER_MINUTE).toBe(3000);
    expect(loadConfig({ RATE_LIMIT_KEYED_PER_MINUTE: "7" }).RATE_LIMIT_SOURCE_PER_MINUTE).toBe(35);
    expect(loadConfig({ RATE_LIMIT_SOURCE_PER_MINUTE: "" }).RATE_LIMIT_SOURCE_PER_MINUTE).toBe(3000);
    expect(loadConfig({ RATE_LIMIT_SOURCE_PER_MINUTE: "40" }).RATE_LIMIT_SOURCE_PER_MINUTE).toBe(40);
    expect(() => loadConfig({ RATE_LIMIT_SOURCE_PER_MINUTE: "0" })).toThrow(/RATE_LIMIT_SOURCE_PER_MINUTE/);
    expect(() => loadConfig({ RATE_LIMIT_SOURCE_PER_MINUTE: "lots" })).toThrow(/RATE_LIMIT_SOURCE_PER_MINUTE/);
  });

  it("reads the cache and event-bus settings (docs/design/edge.md#authentication-cache, docs/design/identity-and-abuse.md#counting-across-replicas) and refuses out-of-range values", () => {
    expect(loadConfig({})).toMatchObject({
      AUTH_CACHE_MAX_ENTRIES: 10_000,
      READ_CACHE_TTL_MS: 1_000,
      READ_CACHE_MAX_BYTES: 8 * 1024 * 1024,
      RATE_LIMIT_SYNC_MS: 250,
      NATS_STREAM: "APS",
      APS_SUBJECT_PREFIX: "aps",
    });
    expect(loadConfig({}).NATS_URL).toBeUndefined();
    // unset: the server picks 60 s with the event bus, 5 s without (docs/design/edge.md#authentication-cache)
    expect(loadConfig({}).AUTH_CACHE_TTL_MS).toBeUndefined();
    expect(loadConfig({ AUTH_CACHE_TTL_MS: "" }).AUTH_CACHE_TTL_MS).toBeUndefined();
    expect(loadConfig({ AUTH_CACHE_TTL_MS: "600000" }).AUTH_CACHE_TTL_MS).toBe(600_000);
    const c = loadConfig({
      AUTH_CACHE_TTL_MS: "0",
      READ_CACHE_TTL_MS: "2000",
      READ_CACHE_MAX_BYTES: "0",
      NATS_URL: "nats://n:4222",
      APS_SUBJECT_PREFIX: "t1.aps",
      RATE_LIMIT_SYNC_MS: "100",
    });
    expect(c).toMatchObject({
      AUTH_CACHE_TTL_MS: 0,
      READ_CACHE_TTL_MS: 2_000,
      READ_CACHE_MAX_BYTES: 0,
      NATS_URL: "nats://n:4222",
      APS_SUBJECT_PREFIX: "t1.aps",
      RATE_LIMIT_SYNC_MS: 100,
    });
    expect(() => loadConfig({ AUTH_CACHE_TTL_MS: "600001" })).toThrow(/AUTH_CACHE_TTL_MS/);
    expect(() => loadConfig({ AUTH_CACHE_TTL_MS: "-1" })).toThrow(/AUTH_CACHE_TTL_MS/);
    expect(() => loadConfig({ READ_CACHE_TTL_MS: "soon" })).toThrow(/READ_CACHE_TTL_MS/);
    expect(() => loadConfig({ AUTH_CACHE_MAX_ENTRIES: "0" })).toThrow(/AUTH_CACHE_MAX_ENTRIES/);
    expect(() => loadConfig({ RATE_LIMIT_SYNC_MS: "1" })).toThrow(/RATE_LIMIT_SYNC_MS/);
    expect(() => loadConfig({ APS_SUBJECT_PREFIX: "Bad Prefix" })).toThrow(/APS_SUBJECT_PREFIX/);
  });

  it("refuses an APS_ADMIN_TOKEN shorter than 32 characters; empty is unset (docs/design/operations.md#chart-defaults-against-abuse)", () => {
    expect(() => loadConfig({ APS_ADMIN_TOKEN: "secret" })).toThrow(/APS_ADMIN_TOKEN.*at least 32 characters/);
    expect(() => loadConfig({ APS_ADMIN_TOKEN: "x".repeat(31) })).toThrow(/APS_ADMIN_TOKEN/);
    expect(loadConfig({ APS_ADMIN_TOKEN: "x".repeat(32) }).APS_ADMIN_TOKEN).toBe("x".repeat(32));
    expect(loadConfig({ APS_ADMIN_TOKEN: "" }).APS_ADMIN_TOKEN).toBeUndefined();
  });

  it("MCP_ALLOWED_ORIGINS: a list of origins or *, unset by default (docs/design/agents.md#untrusted-content)", () => {
    expect(loadConfig({}).MCP_ALLOWED_ORIGINS).toBeUndefined();
    expect(loadConfig({ MCP_ALLOWED_ORIGINS: "" }).MCP_ALLOWED_ORIGINS).toBeUndefined();
    expect(
      loadConfig({ MCP_ALLOWED_ORIGINS: "https://App.Example, http://localhost:3000/ ,https://x.example:443" })
        .MCP_ALLOWED_ORIGINS,
    ).toEqual(["https://app.example", "http://localhost:3000", "https://x.example"]);
    expect(loadConfig({ MCP_ALLOWED_ORIGINS: "*" }).MCP_ALLOWED_ORIGINS).toEqual(["*"]);
    for (const bad of ["app.example", "https://app.example/path", "ftp://app.example", "null", "https://a.example?x=1"])
      expect(() => loadConfig({ MCP_ALLOWED_ORIGINS: bad })).toThrow(/MCP_ALLOWED_ORIGINS/);
  });

  it("reads the event-stream bounds (docs/design/events.md#event-stream-sse) and refuses out-of-range values", () => {
    expect(loadConfig({})).toMatchObject({
      EVENT_STREAMS_PER_SOURCE: 10,
      EVENT_STREAMS_PER_REPLICA: 2_000,
      EVENT_STREAM_MAX_BUFFER_BYTES: 1024 * 1024,
      EVENT_STREAM_MAX_AGE_MS: 15 * 60_000,
    });
    expect(
      loadConfig({
        EVENT_STREAMS_PER_SOURCE: "20",
        EVENT_STREAMS_PER_REPLICA: "5",
        EVENT_STREAM_MAX_BUFFER_BYTES: "65536",
        EVENT_STREAM_MAX_AGE_MS: "1000",
      }),
    ).toMatchObject({
      EVENT_STREAMS_PER_SOURCE: 20,
      EVENT_STREAMS_PER_REPLICA: 5,
      EVENT_STREAM_MAX_BUFFER_BYTES: 65_536,
      EVENT_STREAM_MAX_AGE_MS: 1_000,
    });
    expect(() => loadConfig({ EVENT_STREAMS_PER_SOURCE: "21" })).toThrow(/EVENT_STREAMS_PER_SOURCE/);
    expect(() => loadConfig({ EVENT_STREAMS_PER_SOURCE: "0" })).toThrow(/EVENT_STREAMS_PER_SOURCE/);
    expect(() => loadConfig({ EVENT_STREAMS_PER_REPLICA: "many" })).toThrow(/EVENT_STREAMS_PER_REPLICA/);
    expect(() => loadConfig({ EVENT_STREAM_MAX_BUFFER_BYTES: "1024" })).toThrow(/EVENT_STREAM_MAX_BUFFER_BYTES/);
    expect(() => loadConfig({ EVENT_STREAM_MAX_AGE_MS: "999" })).toThrow(/EVENT_STREAM_MAX_AGE_MS/);
  });

  it("reads overrides and refuses bad values", () => {
    expect(loadConfig({ PORT: "0", APS_ADMIN_TOKEN: "t".repeat(32), TRUSTED_PROXIES: "10.0.0.1" })).toMatchObject({
      PORT: 0,
      APS_ADMIN_TOKEN: "t".repeat(32),
      TRUSTED_PROXIES: "10.0.0.1",
    });
    expect(() => loadConfig({ PORT: "http" })).toThrow(/PORT/);
    expect(() => loadConfig({ FORUM_GRPC_ADDR: "forum" })).toThrow(/FORUM_GRPC_ADDR/);
    expect(loadConfig({}).TRANSLATION_GRPC_ADDR).toBe("127.0.0.1:50055");
    expect(loadConfig({ TRANSLATION_GRPC_ADDR: "aps-translation:50055" }).TRANSLATION_GRPC_ADDR).toBe(
      "aps-translation:50055",
    );
    expect(() => loadConfig({ TRANSLATION_GRPC_ADDR: "translation" })).toThrow(/TRANSLATION_GRPC_ADDR/);
    // a headless Service (the chart) and several local replicas (start:distributed): docs/design/services.md#balancing-and-connection-age, docs/design/operations.md#local-replicas
    expect(loadConfig({ FORUM_GRPC_ADDR: "dns:///aps-forum:50052" }).FORUM_GRPC_ADDR).toBe("dns:///aps-forum:50052");
    expect(loadConfig({ FORUM_GRPC_ADDR: "ipv4:127.0.0.1:50052,127.0.0.1:50053" }).FORUM_GRPC_ADDR).toBe(
      "ipv4:127.0.0.1:50052,127.0.0.1:50053",
    );
  });
});
