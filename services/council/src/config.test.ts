import { loadConfig } from "./config.js";

describe("council loadConfig(env)", () => {
  it("defaults COUNCIL_DEADLINE to 7 days in ms (docs/design/council.md#statuses-and-the-lifecycle-rule)", () => {
    const c = loadConfig({});
    expect(c.COUNCIL_DEADLINE).toBe(7 * 24 * 3600 * 1000);
    expect(c.COUNCIL_LISTEN_ADDR).toBe("0.0.0.0:50053");
    expect(c.COUNCIL_TICK_MS).toBe(5000);
  });

  it("accepts duration text or milliseconds and refuses nonsense", () => {
    expect(loadConfig({ COUNCIL_DEADLINE: "12h" }).COUNCIL_DEADLINE).toBe(12 * 3600 * 1000);
    expect(loadConfig({ COUNCIL_DEADLINE: "90000" }).COUNCIL_DEADLINE).toBe(90_000);
    expect(() => loadConfig({ COUNCIL_DEADLINE: "soon" })).toThrow(/COUNCIL_DEADLINE/);
    expect(() => loadConfig({ COUNCIL_DEADLINE: "-5d" })).toThrow(/COUNCIL_DEADLINE/);
  });

  it("COUNCIL_MIN_OWNERS defaults to 0 (off) and takes an integer ≥ 0 (docs/design/council.md#operator-diverse-adoption)", () => {
    expect(loadConfig({}).COUNCIL_MIN_OWNERS).toBe(0);
    expect(loadConfig({ COUNCIL_MIN_OWNERS: "2" }).COUNCIL_MIN_OWNERS).toBe(2);
    expect(() => loadConfig({ COUNCIL_MIN_OWNERS: "-1" })).toThrow(/COUNCIL_MIN_OWNERS/);
    expect(() => loadConfig({ COUNCIL_MIN_OWNERS: "1.5" })).toThrow(/COUNCIL_MIN_OWNERS/);
  });
});
