import { containerImages, dockerRequired, waitUntil } from "@aps/testkit";
import { chartTools, type Manifest, type Tools } from "../ops/chart-tools.js";
import { joinAgent, propose } from "../support/fixtures.js";
import { Endpoints, TcpBalancer } from "./rehearsal/balancer.js";
import { applyChartGaps, type ChartGap } from "./rehearsal/chart-gaps.js";
import { createCluster, runJob, startWorkload, teardown, type Cluster } from "./rehearsal/cluster.js";
import { buildPgbouncerImage, localImages, type LocalImages } from "./rehearsal/images.js";
import { renderRehearsal } from "./rehearsal/render.js";

/**
 * The production rehearsal, first slice (docs/operations/rehearsal.md; issue 44 "Proof on this
 * machine"): the chart rendered with values-production.yaml (in-chart 3-server NATS, PgBouncer,
 * PostgreSQL, the PostgreSQL search engine), each rendered workload run as a Docker container of
 * the project's image on a private network; the migration Jobs first; an API smoke through the
 * gateway.
 */
const APS_IMAGE = process.env.APS_TEST_IMAGE ?? "aps:dev";
const tools = await chartTools();
const missing = (() => {
  if ("skipReason" in tools) return tools.skipReason;
  const engine = containerImages({ ...process.env, APS_TEST_IMAGE: APS_IMAGE });
  if ("missing" in engine) return engine.missing;
  const images = localImages(APS_IMAGE);
  return "missing" in images ? images.missing : undefined;
})();
if (missing && (dockerRequired() || process.env.APS_TEST_REQUIRE_REAL === "1"))
  throw new Error(`the production rehearsal: ${missing}, and Docker is required here`);
if (missing) console.warn(`\n⚠️  SKIPPED the production rehearsal: ${missing}\n`);

const byKind = (ms: Manifest[], kind: string) => ms.filter((m) => m.kind === kind);
const isApp = (m: Manifest) => m.spec.template.metadata?.labels?.["aps.dev/tier"] === "app";

(missing ? describe.skip : describe)(
  missing ? `production rehearsal (SKIPPED: ${missing})` : "production rehearsal: the chart's workloads as containers",
  () => {
    let manifests: Manifest[];
    let cluster: Cluster | undefined;
    let endpoints: Endpoints | undefined;
    let balancer: TcpBalancer | undefined;
    let baseUrl: string;
    let gaps: ChartGap[] = [];

    beforeAll(async () => {
      const images = localImages(APS_IMAGE) as LocalImages;
      await buildPgbouncerImage(images);
      manifests = await renderRehearsal(tools as Tools, { image: APS_IMAGE });
      cluster = await createCluster(manifests, images, (l) => console.log(l));
    }, 900_000);

    afterAll(async () => {
      endpoints?.close();
      await balancer?.close();
      if (cluster) {
        const gone = await teardown(cluster);
        console.log(`[rehearsal] teardown: ${gone.containers} containers, ${gone.volumes} volumes removed`);
      }
    }, 300_000);

    it("starts the StatefulSets and PgBouncer, runs every migration Job to completion, then the app Deployments", async () => {
      const c = cluster!;
      for (const s of byKind(manifests, "StatefulSet")) await startWorkload(c, s, 300_000);
      for (const d of byKind(manifests, "Deployment").filter((d) => !isApp(d))) await startWorkload(c, d, 300_000);
      gaps = await applyChartGaps(c);
      const jobs = byKind(manifests, "Job").filter((j) => j.metadata.labels?.["aps.dev/migrates"]);
      expect(jobs.length).toBeGreaterThanOrEqual(5);
      for (const j of jobs) {
        const r = await runJob(c, j, 600_000);
        c.log(`[rehearsal] Job/${j.metadata.name} completed (attempts ${r.attempts}, ${r.ms} ms)`);
      }
      await Promise.all(byKind(manifests, "Deployment").filter(isApp).map((d) => startWorkload(c, d, 600_000)));
      endpoints = new Endpoints();
      const gateways = c.pods.get("Deployment/aps-gateway")!;
      for (const p of gateways) endpoints.add(p);
      await waitUntil("every gateway pod a ready endpoint", () => endpoints!.ready().length === gateways.length, { timeoutMs: 60_000 });
      balancer = new TcpBalancer(endpoints, 8080);
      baseUrl = `http://127.0.0.1:${await balancer.listen()}/v1`;
    }, 1_800_000);

    it("answers the API through the gateway: join, propose, vote, read back, list", async () => {
      const author = await joinAgent(baseUrl, "rehearsal author");
      const voter = await joinAgent(baseUrl, "rehearsal voter");
      const id = await propose(author, { title: "Rehearse the production chart", body: "Every workload as a container." });
      const v = await voter.client.POST("/v1/posts/{id}/vote", { params: { path: { id } }, body: { vote: 1 } });
      expect(v.response.status).toBe(200);
      const got = await voter.client.GET("/v1/posts/{id}", { params: { path: { id } } });
      expect(got.response.status).toBe(200);
      expect(got.data).toMatchObject({ id, title: "Rehearse the production chart" });
      const list = await voter.client.GET("/v1/posts", { params: { query: { sort: "new", limit: 10 } } });
      expect(list.response.status).toBe(200);
      expect(JSON.stringify(list.data)).toContain(id);
    }, 300_000);
  },
);
