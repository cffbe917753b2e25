import {
  createTestDatabase,
  deleteTestStream,
  eventually,
  freePort,
  hasNats,
  hasPostgres,
  httpClient,
  TEST_NATS_URL,
  uniqueBusNames,
  type TestDatabase,
} from "@aps/testkit";
import { SERVICES, type ServiceName } from "@aps/platform";
import { startTopology } from "../faults/topology.js";

/**
 * Each deployable's own Prometheus endpoint (README "Metrics", docs/observability.md, docs/design/operations.md#metrics), in
 * the distributed topology (one process per service, real PostgreSQL + NATS): every process gets
 * its own `METRICS_PORT`, and after requests through the gateway each `/metrics` answers the text
 * exposition with the series of that process — and only of that process (no other service's
 * gRPC methods):
 * - gateway: HTTP requests by route template (`/v1/me/quotas`), and not on its public port;
 * - forum, identity, council, knowledge, translation, notifications: gRPC handled/duration for their own methods;
 * - forum, identity, council: their outbox backlog; council and knowledge: deliveries of their
 *   durable consumers; knowledge: search latency; every one: process_* series.
 */
const real = (await hasPostgres()) && (await hasNats());
if (!real) console.warn("[metrics-services.test] NO REAL PostgreSQL + NATS: the per-service /metrics test is SKIPPED");
const TIMEOUT = 240_000;
type Deployable = ServiceName | "gateway";
const GRPC_PACKAGE: Record<ServiceName, string> = {
  forum: "/aps.forum.v1.ForumService/",
  identity: "/aps.identity.v1.IdentityService/",
  council: "/aps.council.v1.CouncilService/",
  knowledge: "/aps.knowledge.v1.KnowledgeService/",
  translation: "/aps.translation.v1.TranslationService/",
  notifications: "/aps.notifications.v1.NotificationsService/",
};

/** Every sample of `name` in `text`: its labels and value. */
function samples(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  const out: { labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const inner = line.slice(name.length + 1, line.lastIndexOf("}"));
    const labels = Object.fromEntries([...inner.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
    out.push({ labels, value: Number(line.slice(line.lastIndexOf(" ") + 1)) });
  }
  return out;
}

/** The sum of the samples of `name` whose labels all match (a string, or a predicate). */
function total(text: string, name: string, match: Record<string, string | ((v: string) => boolean)>): number {
  return samples(text, name)
    .filter((s) =>
      Object.entries(match).every(([k, m]) =>
        typeof m === "string" ? s.labels[k] === m : s.labels[k] !== undefined && m(s.labels[k]),
      ),
    )
    .reduce((a, s) => a + s.value, 0);
}

(real ? describe : describe.skip)(
  real
    ? "/metrics of each service (distributed topology, real PostgreSQL + NATS)"
    : "/metrics of each service (SKIPPED: no real PostgreSQL + NATS)",
  () => {
    let db: TestDatabase;
    let topo: Awaited<ReturnType<typeof startTopology>>;
    const names = uniqueBusNames();
    const metricsPorts = {} as Record<Deployable, number>;

    beforeAll(async () => {
      for (const n of [...SERVICES.map((s) => s.name), "gateway"] as Deployable[]) metricsPorts[n] = await freePort();
      db = await createTestDatabase();
      topo = await startTopology(
        {
          DATABASE_URL: db.url,
          NATS_URL: TEST_NATS_URL,
          NATS_STREAM: names.stream,
          APS_SUBJECT_PREFIX: names.prefix,
          // one vote puts the post on the agenda: the council's consumer gets forum.post_on_agenda
          AGENDA_MIN_SCORE: "1",
        },
        { childEnv: (name) => ({ METRICS_PORT: String(metricsPorts[name]) }) },
      );
    }, TIMEOUT);
    afterAll(async () => {
      await topo?.stop();
      await deleteTestStream(names.stream);
      await db?.drop();
    }, TIMEOUT);

    /** GET /metrics of one process (200, Prometheus text). */
    async function scrape(name: Deployable): Promise<string> {
      const r = await fetch(`http://127.0.0.1:${metricsPorts[name]}/metrics`);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
      return r.text();
    }

    it(
      "each of the 7 processes serves its own series on its METRICS_PORT",
      async () => {
        const req = httpClient(topo.baseUrl);
        const author = await req("POST", "/join", { body: { name: "metrics author" } });
        expect(author.status).toBe(201);
        const voter = await req("POST", "/join", { body: { name: "metrics voter" } });
        const post = await req("POST", "/posts", {
          key: author.body.apiKey,
          body: { title: "Per-service metrics", body: "Scraped one by one.", is_arch_design: true },
        });
        expect(post.status).toBe(201);
        expect(
          (await req("POST", `/posts/${post.body.id}/vote`, { key: voter.body.apiKey, body: { vote: 1 } })).status,
        ).toBe(200);
        expect((await req("GET", `/posts/${post.body.id}`)).status).toBe(200);
        // council: the agenda lists its cases (a post read no longer asks the council, docs/design/council.md#the-forums-projection-of-the-case)
        expect((await req("GET", "/agenda")).status).toBe(200);
        expect((await req("GET", "/me/quotas", { key: author.body.apiKey })).status).toBe(200);
        // notifications: the feed and the inbox's unread count (docs/reference/events.md)
        expect((await req("GET", "/events")).status).toBe(200);
        expect((await req("GET", "/me", { key: author.body.apiKey })).body.unread).toEqual(expect.any(Number));
        // translation: no engine here, so /me/quotas does not ask it (docs/design/agents.md#discovery); an anonymous read of
        // the cache does (404 translation_not_cached, answered by the translation service)
        const cached = await req("GET", `/posts/${post.body.id}/translation?lang=es`);
        expect(cached.status).toBe(404);
        expect(cached.body.code).toBe("translation_not_cached");
        // search: the post is indexed by the knowledge consumer (a condition, generous ceiling)
        await eventually(async () => {
          const r = await req("GET", "/knowledge/search?q=scraped");
          expect(r.status).toBe(200);
          expect(JSON.stringify(r.body)).toContain(post.body.id);
        }, 60_000);

        // gateway: HTTP series by route template, /metrics not on the public port
        const gw = await scrape("gateway");
        expect(total(gw, "aps_http_requests_total", { route: "/v1/me/quotas", status: "200" })).toBeGreaterThan(0);
        expect(gw).not.toContain(post.body.id);
        expect((await fetch(topo.baseUrl.replace(/\/v1$/, "") + "/metrics")).status).toBe(404);

        for (const svc of SERVICES.map((s) => s.name)) {
          const own = GRPC_PACKAGE[svc];
          let text = "";
          // consumers' deliveries and the outbox gauge update asynchronously: wait for them
          await eventually(async () => {
            text = await scrape(svc);
            expect(total(text, "aps_grpc_server_handled_total", { method: (m) => m.startsWith(own) })).toBeGreaterThan(
              0,
            );
            expect(
              total(text, "aps_grpc_server_handling_seconds_count", { method: (m) => m.startsWith(own) }),
            ).toBeGreaterThan(0);
            if (svc === "council")
              expect(total(text, "aps_consumer_deliveries_total", { durable: "council-agenda" })).toBeGreaterThan(0);
            if (svc === "notifications")
              expect(total(text, "aps_consumer_deliveries_total", { durable: "notifications-feed" })).toBeGreaterThan(
                0,
              );
            if (svc === "knowledge") {
              expect(total(text, "aps_consumer_deliveries_total", { durable: "knowledge-index" })).toBeGreaterThan(0);
              expect(total(text, "aps_search_duration_seconds_count", { kind: "search" })).toBeGreaterThan(0);
            }
          }, 30_000);
          // only this process's methods
          const foreign = samples(text, "aps_grpc_server_handled_total")
            .map((s) => s.labels.method ?? "")
            .filter((m) => !m.startsWith(own) && !m.startsWith("/grpc.health."));
          expect({ svc, foreign }).toEqual({ svc, foreign: [] });
          if (svc === "forum" || svc === "identity" || svc === "council") {
            expect(text).toMatch(/^# TYPE aps_outbox_backlog gauge$/m);
            expect(samples(text, "aps_outbox_backlog").map((s) => s.labels.service)).toEqual([svc]);
          }
          expect(text).toMatch(/^process_cpu_user_seconds_total /m);
        }
      },
      TIMEOUT,
    );
  },
);
