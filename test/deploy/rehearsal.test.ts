import { existsSync } from "node:fs";
import { containerImages, docker, dockerRequired, eventually, registerApsOrigin, waitUntil } from "@aps/testkit";
import { chartTools, type Manifest, type Tools } from "../ops/chart-tools.js";
import { apiSuite } from "../e2e/suites/api.js";
import { notificationsSuite } from "../e2e/suites/notifications.js";
import type { SuiteHost } from "../support/shared-system.js";
import { joinAgent, propose } from "../support/fixtures.js";
import { Endpoints, TcpBalancer } from "./rehearsal/balancer.js";
import { applyChartGaps, type ChartGap } from "./rehearsal/chart-gaps.js";
import { createCluster, runJob, startWorkload, teardown, type Cluster } from "./rehearsal/cluster.js";
import { buildPgbouncerImage, localImages, type LocalImages } from "./rehearsal/images.js";
import { carriedRate, LoadGenerator, verifyWritesEventually } from "./rehearsal/load.js";
import { emptyDatabase, jobFromCronJob, readerView } from "./rehearsal/backup.js";
import { podLog, stopPod, waitReady } from "./rehearsal/pod.js";
import { dashboardQueries, grafanaExpr, PROMETHEUS_BIN, RehearsalPrometheus } from "./rehearsal/prometheus.js";
import { renderedSecret, renderRehearsal } from "./rehearsal/render.js";
import { rollDeployment } from "./rehearsal/rollout.js";
import { missingEvents, RehearsalStream } from "./rehearsal/stream.js";

/**
 * The production rehearsal (docs/operations/rehearsal.md): the chart rendered with values-production.yaml (in-chart 3-server NATS, PgBouncer,
 * PostgreSQL, the PostgreSQL search engine), each rendered workload run as a Docker container of
 * the project's image on a private network; the migration Jobs first; an API smoke through the
 * gateway; a rolling restart of every Deployment under load; the event stream's leader killed
 * under load; a real Prometheus scraping every pod, every dashboard query and rule checked.
 */
/**
 * Alerts whose firing depends on how fast this host is, not on a fault (docs/operations/rehearsal.md,
 * step "Observability"): the latency objective's burn. Their rules must still evaluate.
 */
const HOST_SPEED_ALERTS = ["APSLatencyBudgetBurn"];

const APS_IMAGE = process.env.APS_TEST_IMAGE ?? "aps:dev";
const tools = await chartTools();
/**
 * The Deployments the roll restarts: those `REHEARSAL_ROLL` names (comma-separated), else every
 * one, PgBouncer's stand-in last (`npm run rehearsal`). Inside the whole suite (scripts/suite.mjs
 * sets APS_TEST_TIMINGS_OUT, and its rehearsal lane runs this file once the image is built) the gateway
 * and forum only — the gateway's drain and the path of every write — which keeps CI within its
 * 25 minutes (docs/operations/rehearsal.md "In CI").
 */
const ROLL: string[] | undefined = process.env.REHEARSAL_ROLL
  ? process.env.REHEARSAL_ROLL.split(",")
  : process.env.APS_TEST_TIMINGS_OUT !== undefined
    ? ["aps-gateway", "aps-forum"]
    : undefined;
/**
 * The previous commit's APS image (`npm run rehearsal:previous` builds `aps:previous` from
 * HEAD~1), for the rollback to it and the upgrade back; unset, that step skips and says so.
 */
const PREVIOUS = process.env.APS_REHEARSAL_PREVIOUS_IMAGE;
const missing = (() => {
  if ("skipReason" in tools) return tools.skipReason;
  const engine = containerImages({ ...process.env, APS_TEST_IMAGE: APS_IMAGE });
  if ("missing" in engine) return engine.missing;
  const images = localImages(APS_IMAGE, undefined, PREVIOUS);
  if ("missing" in images) return images.missing;
  return existsSync(PROMETHEUS_BIN) ? undefined : `${PROMETHEUS_BIN} not found (Debian package prometheus)`;
})();
if (missing && (dockerRequired() || process.env.APS_TEST_REQUIRE_REAL === "1"))
  throw new Error(`the production rehearsal: ${missing}, and Docker is required here`);
if (missing) console.warn(`\n⚠️  SKIPPED the production rehearsal: ${missing}\n`);

const RATE = Number(process.env.REHEARSAL_RATE ?? 50);
if (!missing && !PREVIOUS)
  console.warn(
    "\n⚠️  SKIPPING the rehearsal's rollback and upgrade: APS_REHEARSAL_PREVIOUS_IMAGE is unset (npm run rehearsal:previous)\n",
  );
/** Deployment `d` with its container on `image` (what `helm upgrade --set image.tag=…` changes). */
const withImage = (d: Manifest, image: string): Manifest => {
  const copy = structuredClone(d);
  copy.spec.template.spec.containers[0].image = image;
  return copy;
};
/** "N ms after <what>" for a timeline entry. */
const at = (e: { at: number; what: string } | undefined, t: number) =>
  e ? `${t - e.at} ms after ${e.what}` : "before the roll";
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
    let figures: { failed: number; total: number } | undefined;
    let rollMs = 0;
    /** The rate the roll ran at, requests/s (carriedRate); the later loads of the run use it too. */
    let rollRate = RATE;
    /** Every load of the run: their acknowledged writes must all have their events in the stream. */
    const loads: LoadGenerator[] = [];
    let stream: RehearsalStream | undefined;
    let natsFigures: { failed: number; requests: number; lost: number; events: number } | undefined;
    let prometheus: RehearsalPrometheus | undefined;
    let scrapeTargets: NodeJS.Timeout | undefined;
    let series = 0;
    let restoreMs: number | undefined;
    /** The in-chart PostgreSQL's superuser URL (POSTGRES_USER of its pod), reachable from here. */
    const superuserUrl = () => {
      const pg = cluster!.pods.get("StatefulSet/aps-postgresql")![0]!;
      const u = (v: string | undefined) => encodeURIComponent(v ?? "");
      return `postgres://${u(pg.env.POSTGRES_USER)}:${u(pg.env.POSTGRES_PASSWORD)}@${pg.ip}:5432/${u(pg.env.POSTGRES_DB)}`;
    };

    beforeAll(async () => {
      const images = localImages(APS_IMAGE, undefined, PREVIOUS) as LocalImages;
      await buildPgbouncerImage(images);
      manifests = await renderRehearsal(tools as Tools, { image: APS_IMAGE });
      cluster = await createCluster(manifests, images, (l) => console.log(l));
    }, 900_000);

    afterAll(async () => {
      if (figures)
        console.log(
          `[rehearsal] SUMMARY: requests failed/total during the roll ${figures.failed}/${figures.total} at ${rollRate}/s; roll ${(rollMs / 1000).toFixed(0)} s; ` +
            (natsFigures
              ? `NATS leader killed: requests failed/total ${natsFigures.failed}/${natsFigures.requests}, events lost/total ${natsFigures.lost}/${natsFigures.events}; `
              : "") +
            `restore ${restoreMs ?? "-"} ms; Prometheus series ${series}; containers started ${cluster?.started ?? 0}; chart gaps stood in for ${gaps.length}`,
        );
      clearInterval(scrapeTargets);
      await prometheus?.stop();
      await stream?.close().catch(() => undefined);
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
      await Promise.all(
        byKind(manifests, "Deployment")
          .filter(isApp)
          .map((d) => startWorkload(c, d, 600_000)),
      );
      endpoints = new Endpoints();
      const gateways = c.pods.get("Deployment/aps-gateway")!;
      for (const p of gateways) endpoints.add(p);
      await waitUntil("every gateway pod a ready endpoint", () => endpoints!.ready().length === gateways.length, {
        timeoutMs: 60_000,
      });
      balancer = new TcpBalancer(endpoints, 8080);
      baseUrl = `http://127.0.0.1:${await balancer.listen()}/v1`;
      // Prometheus from here on: it scrapes the pods the PodMonitor selects, as they come and go
      prometheus = await RehearsalPrometheus.start(manifests, c.ctx.workDir, c.ctx.namespace);
      const scrape = () => prometheus!.setTargets([...c.pods.values()].flat());
      scrape();
      scrapeTargets = setInterval(scrape, 1000);
    }, 1_800_000);

    // the e2e API suite (every seed route, each answer checked against the OpenAPI document) and
    // the notifications suite through the balancer, first: some of the API suite's checks read
    // whole lists and need a system no one wrote to (as test/e2e/image.test.ts runs them)
    const host: SuiteHost = {
      mode: "chart-containers",
      start: async () => {
        registerApsOrigin(baseUrl);
        const adminToken = renderedSecret(manifests, "APS_ADMIN_TOKEN");
        // where the notifications suite reads the outboxes and consumers to settle the bus
        const nats = cluster!.pods.get("StatefulSet/aps-nats")![0]!;
        const u = (v: string | undefined) => encodeURIComponent(v ?? "");
        const env = {
          DATABASE_URL: superuserUrl(),
          NATS_URL: `nats://operator:${u(renderedSecret(manifests, "NATS_PASSWORD_OPERATOR"))}@${nats.ip}:4222`,
          NATS_STREAM: cluster!.pods.get("Deployment/aps-forum")![0]!.env.NATS_STREAM ?? "APS",
        };
        return { mode: "chart-containers", baseUrl, adminToken, env, stop: async () => undefined };
      },
      done: async () => undefined,
    };
    apiSuite(host);
    notificationsSuite(host);

    it("answers the API through the gateway: join, propose, vote, read back, list", async () => {
      const author = await joinAgent(baseUrl, "rehearsal author");
      const voter = await joinAgent(baseUrl, "rehearsal voter");
      const id = await propose(author, {
        title: "Rehearse the production chart",
        body: "Every workload as a container.",
      });
      const v = await voter.client.POST("/v1/posts/{id}/vote", { params: { path: { id } }, body: { vote: 1 } });
      expect(v.response.status).toBe(200);
      const got = await voter.client.GET("/v1/posts/{id}", { params: { path: { id } } });
      expect(got.response.status).toBe(200);
      expect(got.data).toMatchObject({ id, title: "Rehearse the production chart" });
      const list = await voter.client.GET("/v1/posts", { params: { query: { sort: "new", limit: 10 } } });
      expect(list.response.status).toBe(200);
      expect(JSON.stringify(list.data)).toContain(id);
    }, 300_000);

    it(`restarts ${ROLL ? ROLL.join(", ") : "every APS Deployment"}, one pod at a time, under ${RATE} requests/s (less when this host cannot answer them within 1 s): no request fails, every acknowledged write is read back (a PgBouncer roll is reported, not asserted: its stand-in, Debian's 1.18, neither waits for its clients as 1.23's SIGTERM does nor leaves Docker's DNS)`, async () => {
      const c = cluster!;
      const agents = [];
      for (let i = 0; i < 10; i++) agents.push(await joinAgent(baseUrl, `rehearsal load agent ${i}`));
      const load = new LoadGenerator(baseUrl, agents, {
        rate: RATE,
        keepAlive: process.env.REHEARSAL_KEEPALIVE !== "0",
      });
      loads.push(load);
      load.start();
      try {
        // the load runs before the roll: some writes exist to read and vote on
        await waitUntil("100 answered requests before the roll", () => load.outcomes.length >= 100, {
          timeoutMs: 120_000,
        });
        // the roll is judged at a rate the system answers within its latency objective here
        // (docs/operations/rehearsal.md "The rate")
        const carried = await carriedRate(load);
        rollRate = carried.rate;
        const windows = carried.windows.map((w) => `${w.rate}/s: ${w.failed} failed, ${w.slow} slow of ${w.sent}`);
        if (carried.rate < RATE || !carried.carried)
          console.warn(
            `[rehearsal] ⚠️ this host does not carry ${RATE} requests/s within 1 s (${windows.join("; ")}): the roll runs at ${carried.rate}/s${carried.carried ? "" : ", which it does not carry either"}`,
          );
        else console.log(`[rehearsal] carried: ${windows.join("; ")}`);
        const rollStart = Date.now();
        const deployments = byKind(manifests, "Deployment").filter((d) => ROLL?.includes(d.metadata.name) ?? true);
        const isBouncer = (d: Manifest) => d.metadata.name.endsWith("-pgbouncer");
        for (const d of deployments.filter((d) => !isBouncer(d)))
          await rollDeployment(c, d, 600_000, d.metadata.name === "aps-gateway" ? endpoints : undefined);
        rollMs = Date.now() - rollStart;
        const appsRolled = Date.now();
        // PgBouncer: the chart's 1.23 waits on SIGTERM for its clients, which move within
        // DATABASE_MAX_LIFETIME_SECONDS (rollouts.test.ts, test/platform/database.test.ts); the
        // stand-in cannot, so what its roll costs is printed, not asserted
        const bouncers = deployments.filter(isBouncer);
        for (const d of bouncers) await rollDeployment(c, d, 600_000);
        await load.stop();
        // reported only when rolled: the suite's roll (ROLL) is the gateway and the forum
        if (bouncers.length > 0) {
          const bouncerRoll = load.summary(appsRolled);
          console.warn(
            `[rehearsal] ⚠️ PgBouncer stand-in roll (not asserted): failed/total ${bouncerRoll.failed}/${bouncerRoll.total} ${JSON.stringify(bouncerRoll.byAnswer)}`,
          );
        }
        const roll = load.summary(rollStart, appsRolled);
        figures = { failed: roll.failed, total: roll.total };
        console.log(
          `[rehearsal] answers during the roll: ${JSON.stringify(roll.byAnswer)} (${roll.resetRetried} reset on a reused idle connection and sent again); endpoints: ${endpoints!.events.join(" ")}`,
        );
        // each failure with what happened last before it in the roll
        const before = (at: number) => c.timeline.filter((e) => e.at <= at).pop();
        for (const f of roll.failures)
          console.log(
            `[rehearsal] FAILED ${f.op} ${f.status ?? f.error}${f.problem ? ` (${f.problem})` : ""} at +${f.at - rollStart} ms, ${at(before(f.at), f.at)}`,
          );
        // and what the gateways logged about them (warnings: the dependency and the gRPC error)
        if (roll.failures.length > 0)
          for (const g of c.pods.get("Deployment/aps-gateway") ?? [])
            console.log(
              `[rehearsal] ${g.name} warnings:\n${(await podLog(g, 400))
                .split("\n")
                .filter((l) => /"level":[45]0/.test(l) && !/rlflx/.test(l))
                .slice(-15)
                .join("\n")}`,
            );
        const unread = await verifyWritesEventually(load, baseUrl);
        // one line, so the suite's summary of a failed run names what failed
        expect(load.verdict(rollStart, appsRolled, unread)).toBe(
          `0 of ${roll.total} requests failed; 0 acknowledged writes not read back`,
        );
        expect({ failures: roll.failures, unread }).toEqual({ failures: [], unread: [] });
        console.log(
          `[rehearsal] acknowledged and read back: ${load.acked.posts.size} posts, ${[...load.acked.comments.values()].flat().length} comments, ${[...load.acked.votes.values()].reduce((n, v) => n + v.size, 0)} votes`,
        );
      } finally {
        await load.stop();
      }
    }, 3_600_000);
    it("kills the event stream's leader, one of 3 NATS servers, under load: no request fails, publishing goes on, and every write acknowledged in the whole run has its event in the stream", async () => {
      const c = cluster!;
      const natsKey = [...c.pods.keys()].find((k) => k.startsWith("StatefulSet/") && k.endsWith("-nats"))!;
      const natsPods = c.pods.get(natsKey)!;
      expect(natsPods.length).toBe(3);
      stream = await RehearsalStream.connect(manifests, natsPods);
      const agents = [];
      for (let i = 0; i < 10; i++) agents.push(await joinAgent(baseUrl, `rehearsal nats agent ${i}`));
      const load = new LoadGenerator(baseUrl, agents, { rate: rollRate });
      loads.push(load);
      load.start();
      try {
        await waitUntil("100 answered requests before the kill", () => load.outcomes.length >= 100, {
          timeoutMs: 120_000,
        });
        const leader = await stream.leader();
        const victim = natsPods.find((p) => p.name === leader) ?? natsPods[0]!;
        // a crash, not a stop: SIGKILL, no lame duck; Docker must not restart it at once
        await docker("update", "--restart", "no", victim.containerName);
        const killAt = Date.now();
        await docker("kill", victim.containerName);
        c.timeline.push({ at: killAt, what: `${victim.name} killed (the stream's leader: ${leader === victim.name})` });
        const after = (t: number) => load.outcomes.filter((o) => o.at > t).length;
        const newLeader = await waitUntil(
          "a new stream leader among the servers left",
          async () => {
            const l = await stream!.leader().catch(() => undefined);
            return l && l !== victim.name ? l : undefined;
          },
          { timeoutMs: 120_000, intervalMs: 500 },
        );
        c.log(`[rehearsal] ${victim.name} killed; ${newLeader} leads the stream ${Date.now() - killAt} ms later`);
        await waitUntil(`${rollRate * 15} requests sent with the server down`, () => after(killAt) >= rollRate * 15, {
          timeoutMs: 180_000,
        });
        // the StatefulSet controller starts the pod again, on its volume
        await docker("update", "--restart", "always", victim.containerName);
        await docker("start", victim.containerName);
        await waitReady(victim, 300_000);
        const back = Date.now();
        c.timeline.push({ at: back, what: `${victim.name} ready again` });
        await waitUntil(`${rollRate * 5} requests sent after its return`, () => after(back) >= rollRate * 5, {
          timeoutMs: 120_000,
        });
        await load.stop();
        const s = load.summary(killAt);
        let check = { missing: [] as string[], total: 0 };
        await eventually(
          async () => {
            const seen = await stream!.forumEvents();
            const all = loads.map((l) => missingEvents(l.acked, seen));
            check = { missing: all.flatMap((a) => a.missing), total: all.reduce((n, a) => n + a.total, 0) };
            expect(check.missing).toEqual([]);
          },
          120_000,
          2000,
        ).catch(() => undefined);
        natsFigures = { failed: s.failed, requests: s.total, lost: check.missing.length, events: check.total };
        console.log(
          `[rehearsal] NATS leader killed: answers from the kill on ${JSON.stringify(s.byAnswer)} (${s.resetRetried} sent again after a reset); events looked for ${check.total}, missing ${check.missing.length}`,
        );
        expect(`${load.verdict(killAt)}; ${check.missing.length} events missing`).toBe(
          `0 of ${s.total} requests failed; 0 acknowledged writes not read back; 0 events missing`,
        );
        expect({ failures: s.failures, missing: check.missing.slice(0, 20) }).toEqual({ failures: [], missing: [] });
      } finally {
        await load.stop();
      }
    }, 1_800_000);

    it("backs the database up with the chart's CronJob, empties it with every APS pod stopped, restores the dump with restore.sh, starts APS again: an anonymous reader gets the same 100 posts, each with its comments", async () => {
      const c = cluster!;
      const cron = manifests.find((m) => m.kind === "CronJob" && m.metadata.name.endsWith("-postgresql-backup"));
      expect(cron).toBeDefined();
      const ids = loads.flatMap((l) => [...l.acked.posts.keys()]).slice(0, 100);
      expect(ids).toHaveLength(100);
      const before = await readerView(baseUrl, ids);
      const backup = await runJob(c, jobFromCronJob(cron!, "aps-backup-now"), 300_000);
      c.log(`[rehearsal] backup Job: ${backup.ms} ms`);
      // 1. stop every writer (the runbook's scale to 0): the gateways leave the endpoints first
      const apps = byKind(manifests, "Deployment").filter(isApp);
      for (const p of c.pods.get("Deployment/aps-gateway") ?? []) endpoints!.terminate(p);
      await Promise.all(apps.flatMap((d) => (c.pods.get(`Deployment/${d.metadata.name}`) ?? []).map(stopPod)));
      // 2. an empty database, then the restore
      const dropped = await emptyDatabase(superuserUrl());
      expect(dropped.length).toBeGreaterThanOrEqual(5);
      const restore = await runJob(c, jobFromCronJob(cron!, "aps-restore-1", "/scripts/restore.sh"), 600_000);
      restoreMs = restore.ms;
      // 3. APS again, on the restored database
      await Promise.all(apps.map((d) => startWorkload(c, d, 600_000)));
      const gateways = c.pods.get("Deployment/aps-gateway")!;
      for (const p of gateways) endpoints!.add(p);
      await waitUntil("every new gateway pod a ready endpoint", () => endpoints!.ready().length === gateways.length, {
        timeoutMs: 120_000,
      });
      const after = await readerView(baseUrl, ids);
      console.log(
        `[rehearsal] backup ${backup.ms} ms; ${dropped.length} schemas dropped; restore ${restore.ms} ms; ${ids.length} posts read back`,
      );
      expect(after).toEqual(before);
    }, 1_800_000);

    it("a real Prometheus scraped every APS pod: every target up, every dashboard query answers data, every rule evaluates, no alert fires", async () => {
      const p = prometheus!;
      const apps = [...cluster!.pods.values()].flat().filter((pod) => pod.labels["aps.dev/tier"] === "app");
      await waitUntil(
        "every APS pod a healthy scrape target",
        async () => {
          const t = await p.targets();
          return t.length === apps.length && t.every((x) => x.health === "up");
        },
        { timeoutMs: 60_000, intervalMs: 1000 },
      ).catch(async (err) => {
        console.log(`[rehearsal] targets: ${JSON.stringify(await p.targets())}`);
        throw err;
      });
      series = Number((await p.query('count({__name__=~".+"})'))[0]?.value[1] ?? 0);
      const queries = dashboardQueries(manifests);
      expect(queries.length).toBeGreaterThan(20);
      // each as its panel runs it: over the dashboard's time range, here the whole run
      const empty: string[] = [];
      for (const q of queries)
        if ((await p.queryRange(grafanaExpr(q.expr, cluster!.ctx.namespace), p.startedAt)).length === 0)
          empty.push(`${q.dashboard} "${q.panel}": ${q.expr}`);
      const all = (await p.query('ALERTS{alertstate="firing"}')).map((a) => a.metric.alertname ?? "?");
      // The latency objective is for the deployment's hardware: here the whole suite shares 2 cores
      // with the rehearsal, so whether requests meet the threshold says how busy the host is. Its
      // rule must evaluate (ruleErrors); its firing is printed with the slow share, not asserted.
      const hostSpeed = all.filter((name) => HOST_SPEED_ALERTS.includes(name));
      const firing = all.filter((name) => !HOST_SPEED_ALERTS.includes(name));
      const slow = (await p.query("aps:http_slow_ratio:rate5m"))[0]?.value[1];
      console.log(
        `[rehearsal] Prometheus: ${apps.length} pods scraped, ${series} series, ${queries.length} dashboard queries (${empty.length} empty), alerts firing: ${JSON.stringify(firing)}; host-speed alerts firing (not asserted): ${JSON.stringify(hostSpeed)}, slow share over 5 min ${slow ?? "?"}`,
      );
      expect({ empty, ruleErrors: await p.ruleErrors(), firing }).toEqual({ empty: [], ruleErrors: [], firing: [] });
    }, 300_000);
    (PREVIOUS ? it : it.skip)(
      PREVIOUS
        ? `rolls every APS Deployment back to the previous commit's image (${PREVIOUS}) on today's schema, then upgrades it again — the migration Jobs first — under the rate of the roll: no request fails, every acknowledged write is read back`
        : "rollback and upgrade: SKIPPED, APS_REHEARSAL_PREVIOUS_IMAGE is unset (npm run rehearsal:previous builds it)",
      async () => {
        const c = cluster!;
        const agents = [];
        for (let i = 0; i < 10; i++) agents.push(await joinAgent(baseUrl, `rehearsal upgrade agent ${i}`));
        const load = new LoadGenerator(baseUrl, agents, { rate: rollRate });
        load.start();
        try {
          await waitUntil("100 answered requests first", () => load.outcomes.length >= 100, { timeoutMs: 120_000 });
          const t0 = Date.now();
          const apps = byKind(manifests, "Deployment").filter(isApp);
          const gw = (d: Manifest) => (d.metadata.name === "aps-gateway" ? endpoints : undefined);
          // the rollback: what `helm rollback` does to the pods; the schema stays today's (expand, contract later: docs/operations/upgrading.md)
          for (const d of apps) await rollDeployment(c, withImage(d, PREVIOUS!), 600_000, gw(d));
          const rolledBack = Date.now();
          c.log(`[rehearsal] rolled back to ${PREVIOUS} in ${rolledBack - t0} ms`);
          // the upgrade: the pre-upgrade hook Jobs, then the pods
          for (const j of byKind(manifests, "Job").filter((j) => j.metadata.labels?.["aps.dev/migrates"]))
            await runJob(c, j, 600_000);
          for (const d of apps) await rollDeployment(c, d, 600_000, gw(d));
          await load.stop();
          const back = load.summary(t0, rolledBack);
          const up = load.summary(rolledBack);
          console.log(
            `[rehearsal] rollback: failed/total ${back.failed}/${back.total}; upgrade: ${up.failed}/${up.total} ${JSON.stringify(up.byAnswer)}; sent again after a reset: ${back.resetRetried + up.resetRetried}`,
          );
          const unread = await verifyWritesEventually(load, baseUrl);
          expect({ rollback: back.failures, upgrade: up.failures, unread }).toEqual({
            rollback: [],
            upgrade: [],
            unread: [],
          });
        } finally {
          await load.stop();
        }
      },
      3_600_000,
    );
  },
);
