import { chartTools, renderChart, type Manifest, type Tools } from "./chart-tools.js";

/**
 * The chart's extension points (docs/operations/install.md "Scheduling, extra volumes and a private CA"): where every workload may run (`global.scheduling`
 * for the dependencies, `defaults`/`components.<name>` for the APS pods and their migration Jobs),
 * a zone spread per component, extra volumes, and a CA bundle every APS container trusts
 * (NODE_EXTRA_CA_CERTS from a ConfigMap). Each render is validated against the Kubernetes schemas.
 */
const tools = await chartTools();
const skipReason = "skipReason" in tools ? tools.skipReason : undefined;

type PodOwner = { kind: string; name: string; pod: any };
/** Every pod template of a render, with its owner. */
function pods(ms: Manifest[]): PodOwner[] {
  return ms.flatMap((m) => {
    if (m.kind === "CronJob")
      return [{ kind: m.kind, name: m.metadata.name, pod: m.spec.jobTemplate.spec.template.spec }];
    if (m.kind === "Pod") return [{ kind: m.kind, name: m.metadata.name, pod: m.spec }];
    if (["Deployment", "StatefulSet", "Job"].includes(m.kind))
      return [{ kind: m.kind, name: m.metadata.name, pod: m.spec.template.spec }];
    return [];
  });
}
/** An APS pod (the components, their migration Jobs and the sandbox), not a dependency's. */
const isApp = (p: PodOwner, ms: Manifest[]) =>
  ["app", "sandbox"].includes(
    ms.find((m) => m.metadata.name === p.name && m.kind === p.kind)!.spec.template?.metadata?.labels?.["aps.dev/tier"],
  );
/** The sandbox on (it is placed as the components are); its connections need a larger max_connections beside PgBouncer. */
const sandbox = ["--set", "sandbox.enabled=true", "--set", "postgresql.maxConnections=150"];

(skipReason ? describe.skip : describe)(
  skipReason
    ? `chart scheduling and extension points (SKIPPED: ${skipReason})`
    : "chart scheduling and extension points",
  () => {
    const backup = ["--set", "postgresql.deployed.backup.enabled=true", "--set", "pgbouncer.enabled=true"];

    it("global.scheduling places every dependency pod, the APS pods and Jobs take defaults' priorityClassName", async () => {
      const ms = await renderChart(tools as Tools, [
        ...backup,
        ...sandbox,
        "--is-upgrade",
        "--set",
        "global.scheduling.nodeSelector.pool=infra",
        "--set",
        "global.scheduling.priorityClassName=platform-high",
        "--set",
        "global.scheduling.tolerations[0].key=dedicated",
        "--set",
        "global.scheduling.tolerations[0].operator=Exists",
        "--set",
        "defaults.priorityClassName=apps",
      ]);
      const all = pods(ms);
      const deps = all.filter((p) => !isApp(p, ms));
      const apps = all.filter((p) => isApp(p, ms));
      // the dependencies: PostgreSQL, NATS, Meilisearch, PgBouncer, the backup CronJob, the test pod
      expect(deps.map((p) => p.kind).sort()).toEqual(
        expect.arrayContaining(["CronJob", "Deployment", "Pod", "StatefulSet", "StatefulSet", "StatefulSet"]),
      );
      for (const p of deps)
        expect({
          name: p.name,
          sel: p.pod.nodeSelector,
          prio: p.pod.priorityClassName,
          tol: p.pod.tolerations,
        }).toEqual({
          name: p.name,
          sel: { pool: "infra" },
          prio: "platform-high",
          tol: [{ key: "dedicated", operator: "Exists" }],
        });
      expect(apps.filter((p) => p.kind === "Job").length).toBeGreaterThanOrEqual(5);
      expect(apps.map((p) => p.name)).toContain("aps-sandbox");
      for (const p of apps)
        expect({ name: p.name, prio: p.pod.priorityClassName }).toEqual({ name: p.name, prio: "apps" });
    });

    it("spreads each component over zones by its own labels unless it brings its own constraints", async () => {
      const ms = await renderChart(tools as Tools, [
        "--set",
        "components.forum.topologySpreadConstraints[0].maxSkew=2",
        "--set",
        "components.forum.topologySpreadConstraints[0].topologyKey=kubernetes.io/hostname",
        "--set",
        "components.forum.topologySpreadConstraints[0].whenUnsatisfiable=DoNotSchedule",
      ]);
      for (const d of ms.filter(
        (m) => m.kind === "Deployment" && m.spec.template.metadata.labels["aps.dev/tier"] === "app",
      )) {
        const [c] = d.spec.template.spec.topologySpreadConstraints;
        const component = d.spec.template.metadata.labels["app.kubernetes.io/component"];
        if (component === "forum") expect(c.topologyKey).toBe("kubernetes.io/hostname");
        else
          expect(c).toMatchObject({
            topologyKey: "topology.kubernetes.io/zone",
            whenUnsatisfiable: "ScheduleAnyway",
            labelSelector: { matchLabels: { "app.kubernetes.io/component": component } },
          });
      }
      const off = await renderChart(tools as Tools, ["--set", "defaults.zoneSpread=false"]);
      expect(off.filter((m) => m.kind === "Deployment" && m.spec.template.spec.topologySpreadConstraints)).toEqual([]);
    });

    it("mounts a CA bundle every APS container trusts, and extra volumes, in the pods and the migration Jobs", async () => {
      const ms = await renderChart(tools as Tools, [
        ...sandbox,
        "--is-upgrade",
        "--set",
        "global.caBundle.configMap=corp-ca",
        "--set",
        "global.caBundle.key=bundle.pem",
        "--set",
        "defaults.extraVolumes[0].name=extra",
        "--set",
        "defaults.extraVolumes[0].emptyDir.sizeLimit=1Mi",
        "--set",
        "defaults.extraVolumeMounts[0].name=extra",
        "--set",
        "defaults.extraVolumeMounts[0].mountPath=/extra",
      ]);
      const apps = pods(ms).filter((p) => isApp(p, ms));
      expect(apps.length).toBeGreaterThanOrEqual(13); // 7 Deployments, the migration Jobs and the sandbox
      for (const { name, pod } of apps) {
        const c = pod.containers[0];
        const env = Object.fromEntries(c.env.map((e: { name: string; value?: string }) => [e.name, e.value]));
        const mount = c.volumeMounts.find((v: { name: string }) => v.name === "ca-bundle");
        const volume = pod.volumes.find((v: { name: string }) => v.name === "ca-bundle");
        expect({ name, ca: env.NODE_EXTRA_CA_CERTS, configMap: volume?.configMap?.name }).toEqual({
          name,
          ca: `${mount.mountPath}/bundle.pem`,
          configMap: "corp-ca",
        });
        expect(c.volumeMounts).toContainEqual({ name: "extra", mountPath: "/extra" });
        expect(pod.volumes).toContainEqual({ name: "extra", emptyDir: { sizeLimit: "1Mi" } });
      }
      // without a bundle: no variable, no volume
      const plain = pods(await renderChart(tools as Tools)).filter((p) =>
        p.pod.volumes?.some((v: any) => v.name === "ca-bundle"),
      );
      expect(plain).toEqual([]);
    });
  },
);
