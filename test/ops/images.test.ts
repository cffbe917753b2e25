import { chartTools, renderChart, type Manifest, type Tools } from "./chart-tools.js";

/**
 * Images a platform can pull (docs/operations/install.md): every image of the
 * release — APS, PostgreSQL, NATS, Meilisearch, PgBouncer, the backup CronJob, the test pods — comes
 * from `global.imageRegistry` when it is set, every pod spec carries `global.imagePullSecrets` and
 * `imagePullSecrets`, dependencies are pinned by patch tag with a `digest` that wins when set.
 */
const tools = await chartTools();
const skipReason = "skipReason" in tools ? tools.skipReason : undefined;
const render = (args: string[] = []) => renderChart(tools as Tools, args);

/**
 * Every optional workload on: the in-chart Meilisearch, PgBouncer, the backup CronJob and the sandbox
 * (its init container runs the PostgreSQL image; its connections need a larger max_connections).
 */
const EVERYTHING = [
  "--set",
  "meilisearch.deployed.enabled=true",
  "--set",
  "pgbouncer.enabled=true",
  "--set",
  "postgresql.deployed.backup.enabled=true",
  "--set",
  "sandbox.enabled=true",
  "--set",
  "postgresql.maxConnections=150",
];

/** Each pod spec of the manifests, named `<Kind>/<name>`. */
function podSpecs(ms: Manifest[]): Array<[string, any]> {
  return ms.flatMap((m): Array<[string, any]> => {
    const name = `${m.kind}/${m.metadata.name}`;
    if (["Deployment", "StatefulSet", "DaemonSet", "Job"].includes(m.kind)) return [[name, m.spec.template.spec]];
    if (m.kind === "CronJob") return [[name, m.spec.jobTemplate.spec.template.spec]];
    if (m.kind === "Pod") return [[name, m.spec]];
    return [];
  });
}
const imagesOf = (spec: any): string[] =>
  [...(spec.initContainers ?? []), ...(spec.containers ?? [])].map((c: any) => c.image as string);

(skipReason ? describe.skip : describe)(
  skipReason
    ? `chart images (SKIPPED: ${skipReason})`
    : "chart images: one registry, pull secrets on every pod, pinned dependencies",
  () => {
    it("global.imageRegistry and the pull secrets reach every pod of the release", async () => {
      const ms = await render([
        ...EVERYTHING,
        "--set",
        "global.imageRegistry=registry.example.com/mirror",
        "--set",
        "global.imagePullSecrets[0].name=regcred",
        "--set",
        "imagePullSecrets[0].name=app-only",
      ]);
      const pods = podSpecs(ms);
      // the APS components, the sandbox, PostgreSQL, NATS, Meilisearch, PgBouncer, the backup and the test pods
      expect(pods.length).toBeGreaterThanOrEqual(14);
      expect(pods.map(([n]) => n)).toContain("Deployment/aps-sandbox");
      for (const kind of ["Deployment", "StatefulSet", "CronJob", "Pod"])
        expect({ kind, some: pods.some(([n]) => n.startsWith(`${kind}/`)) }).toEqual({ kind, some: true });
      const wrong = pods.flatMap(([name, spec]) => [
        ...imagesOf(spec)
          .filter((i) => !i.startsWith("registry.example.com/mirror/"))
          .map((i) => `${name}: image ${i}`),
        ...(JSON.stringify(spec.imagePullSecrets ?? []) === JSON.stringify([{ name: "regcred" }, { name: "app-only" }])
          ? []
          : [`${name}: imagePullSecrets ${JSON.stringify(spec.imagePullSecrets)}`]),
      ]);
      expect(wrong).toEqual([]);
      // the APS image's own registry host is replaced, not kept inside the mirror's path
      expect(pods.flatMap(([, s]) => imagesOf(s))).toContain("registry.example.com/mirror/aps/aps:0.1.0");
    });

    it("without them: the images' own registries and no pull secrets", async () => {
      const pods = podSpecs(await render(EVERYTHING));
      expect(pods.filter(([, s]) => s.imagePullSecrets !== undefined).map(([n]) => n)).toEqual([]);
      expect(pods.flatMap(([, s]) => imagesOf(s))).toContain("ghcr.io/aps/aps:0.1.0");
    });

    it("dependencies are pinned by patch tag, and a digest wins over the tag", async () => {
      const pods = podSpecs(await render(EVERYTHING));
      const deps = [...new Set(pods.flatMap(([, s]) => imagesOf(s)).filter((i) => !i.includes("/aps/aps")))].sort();
      expect(deps).toHaveLength(4); // postgres (database and backup), nats, meilisearch, pgbouncer
      for (const image of deps) {
        const tag = image.slice(image.lastIndexOf(":") + 1);
        // PostgreSQL's patch releases are major.minor (16.4); everything else major.minor.patch
        const pinned = image.includes("postgres:") ? /^\d+\.\d+(-[a-z0-9.]+)?$/ : /^v?\d+\.\d+\.\d+(-[a-z0-9.]+)?$/;
        expect({ image, pinned: pinned.test(tag) }).toEqual({ image, pinned: true });
      }
      const digest = `sha256:${"ab".repeat(32)}`;
      const pinnedPods = podSpecs(await render([...EVERYTHING, "--set", `nats.deployed.image.digest=${digest}`]));
      expect(pinnedPods.flatMap(([, s]) => imagesOf(s))).toContain(`nats@${digest}`);
      await expect(render(["--set", "nats.deployed.image.digest=latest"])).rejects.toThrow(/digest/);
    });
  },
);
