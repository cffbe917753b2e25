import { GATEWAY, SERVICES } from "@aps/platform/topology";
import { chartTools, PROD_VALUES, renderChart, renderChartError, type Tools } from "./chart-tools.js";

/**
 * Rollouts that drop nothing (issue 44 item 3): every APS pod waits `preStopSeconds` before SIGTERM
 * — the Service and the Ingress stop sending it requests while it still answers — then drains
 * within a grace period the chart checks is long enough.
 */
const tools = await chartTools();
const skipReason = "skipReason" in tools ? tools.skipReason : undefined;
const COMPONENTS: string[] = [GATEWAY.name, ...SERVICES.map((s) => s.name)].sort();

(skipReason ? describe.skip : describe)(
  skipReason ? `chart rollouts (SKIPPED: ${skipReason})` : "chart rollouts: a preStop wait, then the drain",
  () => {
    it.each([
      ["default", []],
      ["production", ["-f", PROD_VALUES]],
    ])("every APS pod waits before SIGTERM, within its grace period (%s values)", async (_v, args) => {
      const ms = await renderChart(tools as Tools, args);
      const deployments = ms.filter((m) => m.kind === "Deployment" && m.metadata.name.startsWith("aps-"));
      const seen = deployments
        .map((d) => {
          const spec = d.spec.template.spec;
          const cmd: string[] = spec.containers[0].lifecycle?.preStop?.exec?.command ?? [];
          const ms = Number(/setTimeout\(\(\) => \{\}, (\d+)\)/.exec(cmd.join(" "))?.[1] ?? 0);
          return { name: d.metadata.name.slice(4), waitS: ms / 1000, graceS: spec.terminationGracePeriodSeconds };
        })
        .filter((d) => COMPONENTS.includes(d.name));
      expect(seen.map((d) => d.name).sort()).toEqual(COMPONENTS);
      for (const d of seen) expect({ ...d, ok: d.waitS >= 5 && d.graceS >= d.waitS + 10 }).toEqual({ ...d, ok: true });
    });

    it("refuses a grace period the wait and the drain do not fit in, and renders no wait at 0", async () => {
      expect(
        await renderChartError(tools as Tools, [
          "--set",
          "defaults.preStopSeconds=25",
          "--set",
          "defaults.terminationGracePeriodSeconds=30",
        ]),
      ).toMatch(/terminationGracePeriodSeconds 30 must be at least preStopSeconds 25 \+ 10/);
      const ms = await renderChart(tools as Tools, ["--set", "defaults.preStopSeconds=0"]);
      const gw = ms.find((m) => m.kind === "Deployment" && m.metadata.name === "aps-gateway")!;
      expect(gw.spec.template.spec.containers[0].lifecycle).toBeUndefined();
    });
  },
);
