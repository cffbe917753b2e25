import { loadConfig } from "./config.js";

describe("all-in-one loadConfig(env)", () => {
  it("defaults to an embedded PostgreSQL on any free port under ./data", () => {
    const c = loadConfig({});
    expect(c.APS_EMBEDDED_PG_PORT).toBe(0);
    expect(c.APS_DATA_DIR).toBe("./data");
    expect(c.DATABASE_URL).toBeUndefined();
  });

  it("reads a fixed port and rejects ports outside 0–65535", () => {
    expect(loadConfig({ APS_EMBEDDED_PG_PORT: "5433" }).APS_EMBEDDED_PG_PORT).toBe(5433);
    expect(() => loadConfig({ APS_EMBEDDED_PG_PORT: "70000" })).toThrow(/APS_EMBEDDED_PG_PORT/);
    expect(() => loadConfig({ APS_EMBEDDED_PG_PORT: "-1" })).toThrow(/APS_EMBEDDED_PG_PORT/);
  });

  it("has no cluster template unless APS_EMBEDDED_PG_TEMPLATE (test-only) names one", () => {
    expect(loadConfig({}).APS_EMBEDDED_PG_TEMPLATE).toBeUndefined();
    expect(loadConfig({ APS_EMBEDDED_PG_TEMPLATE: "/tmp/t" }).APS_EMBEDDED_PG_TEMPLATE).toBe("/tmp/t");
  });
});
