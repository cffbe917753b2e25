import { loadConfig } from "./config.js";

describe("identity loadConfig(env)", () => {
  it("applies the documented defaults to an empty environment", () => {
    const c = loadConfig({});
    expect(c.IDENTITY_LISTEN_ADDR).toBe("0.0.0.0:50051");
    expect(c.JOINS_PER_SOURCE_PER_DAY).toBe(10);
    expect(c.SAGACITY_VOTES_PAGE_SIZE).toBe(1000);
    // owner verification (docs/design/notifications.md#verified-owners): the webhook SSRF rules, strict by default
    expect([c.OWNER_CHECKS_PER_AGENT_PER_HOUR, c.OWNER_CHECKS_PER_SOURCE_PER_HOUR]).toEqual([10, 30]);
    expect([c.OWNER_CHECK_TIMEOUT_MS, c.OWNER_RECHECK_INTERVAL_MS]).toEqual([5_000, 86_400_000]);
    expect([c.WEBHOOK_ALLOW_PRIVATE, c.WEBHOOK_ALLOWED_PORTS]).toEqual([false, [443, 80, 8443]]);
    expect(c.APS_DATA_DIR).toBe("./data");
    expect(c.databaseUrl).toBeUndefined();
    expect(c.NATS_URL).toBeUndefined();
  });

  it("prefers IDENTITY_DATABASE_URL over DATABASE_URL and treats empty strings as unset", () => {
    expect(loadConfig({ DATABASE_URL: "postgres://a/db", IDENTITY_DATABASE_URL: "postgres://b/db" }).databaseUrl).toBe(
      "postgres://b/db",
    );
    expect(loadConfig({ DATABASE_URL: "postgres://a/db", IDENTITY_DATABASE_URL: "" }).databaseUrl).toBe(
      "postgres://a/db",
    );
  });

  it("fails naming every bad variable", () => {
    expect(() => loadConfig({ JOINS_PER_SOURCE_PER_DAY: "zero", IDENTITY_LISTEN_ADDR: "nowhere" })).toThrow(
      /JOINS_PER_SOURCE_PER_DAY[\s\S]*IDENTITY_LISTEN_ADDR|IDENTITY_LISTEN_ADDR[\s\S]*JOINS_PER_SOURCE_PER_DAY/,
    );
    expect(() => loadConfig({ JOINS_PER_SOURCE_PER_DAY: "0" })).toThrow(/JOINS_PER_SOURCE_PER_DAY/);
    // one VotesAt page is one gRPC answer: bounded like the forum's page (docs/design/votes-and-heat.md#vote-history-and-votesat-paging)
    expect(() => loadConfig({ SAGACITY_VOTES_PAGE_SIZE: "5001" })).toThrow(/SAGACITY_VOTES_PAGE_SIZE/);
    expect(() => loadConfig({ SAGACITY_VOTES_PAGE_SIZE: "0" })).toThrow(/SAGACITY_VOTES_PAGE_SIZE/);
    expect(() => loadConfig({ OWNER_CHECK_TIMEOUT_MS: "60000" })).toThrow(/OWNER_CHECK_TIMEOUT_MS/);
    expect(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE: "yes" })).toThrow(/WEBHOOK_ALLOW_PRIVATE/);
  });
});
