import { Counter, Histogram, Registry } from "prom-client";
import { zeroSeries } from "./metrics.js";

/** Series at 0 before the first event (docs/observability.md "Dashboards"). */
describe("zeroSeries", () => {
  it("starts a counter's series at 0 for every combination of the label values given, and counting goes on from there", async () => {
    const registry = new Registry();
    const c = new Counter({
      name: "t_flags_total",
      help: "t",
      labelNames: ["reason", "counted"],
      registers: [registry],
    });
    expect((await c.get()).values).toEqual([]);
    zeroSeries(c, { reason: ["spam", "other"], counted: ["true", "false"] });
    const zeroed = (await c.get()).values.map((v) => [v.labels.reason, v.labels.counted, v.value]);
    expect(zeroed.sort()).toEqual(
      [
        ["other", "false", 0],
        ["other", "true", 0],
        ["spam", "false", 0],
        ["spam", "true", 0],
      ].sort(),
    );
    c.inc({ reason: "spam", counted: "true" });
    zeroSeries(c, { reason: ["spam"], counted: ["true"] }); // a second call never resets
    const spam = (await c.get()).values.find((v) => v.labels.reason === "spam" && v.labels.counted === "true");
    expect(spam?.value).toBe(1);
  });

  it("starts a histogram's series (buckets, sum and count) at 0", async () => {
    const registry = new Registry();
    const h = new Histogram({
      name: "t_attempt_seconds",
      help: "t",
      labelNames: ["outcome"],
      buckets: [0.1, 1],
      registers: [registry],
    });
    zeroSeries(h, { outcome: ["ok", "failed"] });
    const text = await registry.metrics();
    for (const outcome of ["ok", "failed"]) {
      expect(text).toContain(`t_attempt_seconds_count{outcome="${outcome}"} 0`);
      expect(text).toContain(`t_attempt_seconds_bucket{le="+Inf",outcome="${outcome}"} 0`);
    }
  });
});
