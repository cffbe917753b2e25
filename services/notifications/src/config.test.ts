import { loadConfig } from "./config.js";

describe("notifications loadConfig(env)", () => {
  it("defaults: 30-day feed, the Standard Webhooks retry schedule (> 24 h in all), private targets refused", () => {
    const c = loadConfig({});
    expect(c.NOTIFICATIONS_LISTEN_ADDR).toBe("0.0.0.0:50056");
    expect(c.FEED_RETENTION).toBe(30 * 24 * 3600 * 1000);
    expect(c.WEBHOOK_RETRY_SCHEDULE).toEqual([5e3, 300e3, 1800e3, 7200e3, 18000e3, 36000e3, 36000e3]);
    expect(c.WEBHOOK_RETRY_SCHEDULE.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(24 * 3600 * 1000);
    expect(c.WEBHOOK_ALLOW_PRIVATE).toBe(false);
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
