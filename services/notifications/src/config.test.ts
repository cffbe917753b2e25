import { loadConfig } from "./config.js";

describe("notifications loadConfig(env)", () => {
  it("defaults: 30-day feed, the Standard Webhooks retry schedule (> 24 h in all), private targets refused", () => {
    const c = loadConfig({});
    expect(c.NOTIFICATIONS_LISTEN_ADDR).toBe("0.0.0.0:50056");
    expect(c.FEED_RETENTION).toBe(30 * 24 * 3600 * 1000);
    expect(c.WEBHOOK_RETRY_SCHEDULE).toEqual([5e3, 300e3, 1800e3, 7200e3, 18000e3, 36000e3, 36000e3]);
    expect(c.WEBHOOK_RETRY_SCHEDULE.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(24 * 3600 * 1000);
    expect(c.WEBHOOK_ALLOW_PRIVATE).toBe(false);
    // webhook attempts and targets (docs/design/notifications.md#attempts)
    expect(c.WEBHOOK_ATTEMPT_TIMEOUT_MS).toBe(10_000);
    expect(c.WEBHOOK_CONCURRENCY).toBe(16);
    expect(c.WEBHOOK_ALLOWED_PORTS).toEqual([443, 80, 8443]);
    // ping, redelivery and secret rotation (docs/design/notifications.md#ping-redelivery-and-secret-rotation)
    expect(c.WEBHOOK_SECRET_OVERLAP_MS).toBe(24 * 3600 * 1000);
  });

  it("DATABASE_POOL_MAX: sized from WEBHOOK_CONCURRENCY unless given (docs/design/notifications.md#connection-pool); INBOX_FANOUT_PAGE 500", () => {
    expect(loadConfig({}).DATABASE_POOL_MAX).toBe(12); // ⌈16 / 2⌉ + 4
    expect(loadConfig({ WEBHOOK_CONCURRENCY: "32" }).DATABASE_POOL_MAX).toBe(20);
    expect(loadConfig({ WEBHOOK_CONCURRENCY: "1" }).DATABASE_POOL_MAX).toBe(5);
    expect(loadConfig({ DATABASE_POOL_MAX: "7" }).DATABASE_POOL_MAX).toBe(7);
    expect(() => loadConfig({ DATABASE_POOL_MAX: "0" })).toThrow(/DATABASE_POOL_MAX/);
    expect(loadConfig({}).INBOX_FANOUT_PAGE).toBe(500);
    expect(() => loadConfig({ INBOX_FANOUT_PAGE: "0" })).toThrow(/INBOX_FANOUT_PAGE/);
  });

  it("WATCH_FANOUT_MAX and WATCHES_PER_AGENT: defaults 500 and 1000, integers ≥ 1 (docs/design/notifications.md#watch-levels)", () => {
    expect(loadConfig({})).toMatchObject({ WATCH_FANOUT_MAX: 500, WATCHES_PER_AGENT: 1000 });
    expect(loadConfig({ WATCH_FANOUT_MAX: "3", WATCHES_PER_AGENT: "2" })).toMatchObject({
      WATCH_FANOUT_MAX: 3,
      WATCHES_PER_AGENT: 2,
    });
    expect(() => loadConfig({ WATCH_FANOUT_MAX: "0" })).toThrow(/WATCH_FANOUT_MAX/);
    expect(() => loadConfig({ WATCHES_PER_AGENT: "many" })).toThrow(/WATCHES_PER_AGENT/);
  });

  it("WEBHOOK_SECRET_OVERLAP_MS: milliseconds ≥ 0 (0: a rotation takes effect at once)", () => {
    expect(loadConfig({ WEBHOOK_SECRET_OVERLAP_MS: "3000" }).WEBHOOK_SECRET_OVERLAP_MS).toBe(3000);
    expect(loadConfig({ WEBHOOK_SECRET_OVERLAP_MS: "0" }).WEBHOOK_SECRET_OVERLAP_MS).toBe(0);
    expect(() => loadConfig({ WEBHOOK_SECRET_OVERLAP_MS: "-1" })).toThrow(/WEBHOOK_SECRET_OVERLAP_MS/);
  });

  it("webhook attempt limits: deadline (the old WEBHOOK_TIMEOUT_MS name still read), pool, ports", () => {
    expect(loadConfig({ WEBHOOK_ATTEMPT_TIMEOUT_MS: "1500" }).WEBHOOK_ATTEMPT_TIMEOUT_MS).toBe(1500);
    expect(loadConfig({ WEBHOOK_TIMEOUT_MS: "7000" }).WEBHOOK_ATTEMPT_TIMEOUT_MS).toBe(7000);
    expect(
      loadConfig({ WEBHOOK_TIMEOUT_MS: "7000", WEBHOOK_ATTEMPT_TIMEOUT_MS: "3000" }).WEBHOOK_ATTEMPT_TIMEOUT_MS,
    ).toBe(3000);
    expect(() => loadConfig({ WEBHOOK_ATTEMPT_TIMEOUT_MS: "10" })).toThrow(/WEBHOOK_ATTEMPT_TIMEOUT_MS/);
    expect(loadConfig({ WEBHOOK_CONCURRENCY: "4" }).WEBHOOK_CONCURRENCY).toBe(4);
    expect(() => loadConfig({ WEBHOOK_CONCURRENCY: "0" })).toThrow(/WEBHOOK_CONCURRENCY/);
    expect(loadConfig({ WEBHOOK_ALLOWED_PORTS: "443, 9443" }).WEBHOOK_ALLOWED_PORTS).toEqual([443, 9443]);
    for (const bad of ["", "https", "0", "70000", "443,,80"])
      expect(() => loadConfig({ WEBHOOK_ALLOWED_PORTS: bad })).toThrow(/WEBHOOK_ALLOWED_PORTS/);
  });

  it("WEBHOOK_ALLOW_PRIVATE is on only for 1/true and refuses anything else", () => {
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE: "1" }).WEBHOOK_ALLOW_PRIVATE).toBe(true);
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE: "true" }).WEBHOOK_ALLOW_PRIVATE).toBe(true);
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE: "0" }).WEBHOOK_ALLOW_PRIVATE).toBe(false);
    expect(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE: "yes" })).toThrow(/WEBHOOK_ALLOW_PRIVATE/);
  });

  it("accepts a short retry schedule for tests and refuses nonsense", () => {
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: "50,100ms,1s" }).WEBHOOK_RETRY_SCHEDULE).toEqual([50, 100, 1000]);
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: "soon" })).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
    expect(() => loadConfig({ FEED_RETENTION: "-1d" })).toThrow(/FEED_RETENTION/);
  });
});
