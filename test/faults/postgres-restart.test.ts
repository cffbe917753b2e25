import {
  canRunPrivatePostgres,
  deleteTestStream,
  hasNats,
  startPrivatePostgres,
  TEST_NATS_URL,
  uniqueBusNames,
  uniqueSuffix,
  type PrivateServer,
} from "@aps/testkit";
import { joinAgents, seatCouncil } from "../support/fixtures.js";
import { eventually, ok, owner, readyz, searchIds, startAio, type Req } from "./support.js";

/**
 * Fault: PostgreSQL restarted under a running APS (docs/reliability.md).
 * Every service of APS runs in jest on a PRIVATE PostgreSQL 15 this test stops and starts (fast
 * shutdown, then an immediate — crash-like — one) and on the shared NATS (a stream of its own).
 * While the database is down the gateway's /readyz answers 503 (each service's gRPC health turns
 * NOT_SERVING from its database probe), /healthz stays 200, and API calls answer 503
 * `upstream_unavailable` problem+json. Once it is back the services reconnect by themselves:
 * /readyz 200 again, writes accepted, and the outbox relay, consumers and Council keep working.
 */
const real = (await hasNats()) && canRunPrivatePostgres();
const TIMEOUT = 240_000;

/** The published bound (docs/reliability.md) on /readyz turning 503 after PostgreSQL stops. */
const READYZ_503_WITHIN_MS = 5_000;

(real ? describe : describe.skip)(
  "PostgreSQL restarted under APS (private PostgreSQL 15, real NATS)" +
    (real ? "" : " (SKIPPED: no real NATS or no PostgreSQL 15 binaries runnable as postgres)"),
  () => {
    let pgServer: PrivateServer;
    let aps: Awaited<ReturnType<typeof startAio>>;
    let req: Req;
    const names = uniqueBusNames();
    const word = `pgfault${uniqueSuffix()}`;

    beforeAll(async () => {
      pgServer = await startPrivatePostgres();
      aps = await startAio({
        DATABASE_URL: pgServer.url,
        NATS_URL: TEST_NATS_URL,
        NATS_STREAM: names.stream,
        APS_SUBJECT_PREFIX: names.prefix,
      });
      req = aps.req;
    }, TIMEOUT);
    afterAll(async () => {
      await aps?.stop();
      await pgServer?.remove();
      await deleteTestStream(names.stream);
    }, TIMEOUT);

    it(
      "answers 503 (readyz and API, readyz within 5 s: timing bound) while PostgreSQL is down and recovers by itself after a fast and a crash-like restart",
      async () => {
        const agents = await joinAgents(req, 4, "pg-fault");
        await seatCouncil(owner(req), agents.slice(0, 3));
        const author = agents[3]!;
        const posted: string[] = [];
        const post = async (label: string) => {
          const b = ok(
            await req("POST", "/posts", {
              key: author.apiKey,
              body: { title: `${word} ${label}`, body: `PostgreSQL fault run ${word}.`, is_arch_design: true },
            }),
            201,
            `post ${label}`,
          );
          posted.push(b.id as string);
          return b.id as string;
        };
        await post("before");
        expect(await readyz(aps.baseUrl)).toBe(200);
        const figures: string[] = [];

        for (const mode of ["fast", "immediate"] as const) {
          const stoppedAt = Date.now();
          await pgServer.stop(mode === "immediate");
          // docs/reliability.md: "/readyz 503 within 5 s" (a 1 s probe; the bound leaves room for a
          // loaded 2-core machine). Measured from the stop request, which itself waits for the stop.
          await eventually(async () => expect(await readyz(aps.baseUrl)).toBe(503), 5_000, 50);
          const notReadyMs = Date.now() - stoppedAt;
          expect(notReadyMs).toBeLessThanOrEqual(READYZ_503_WITHIN_MS);
          const health = await fetch(aps.baseUrl.replace(/\/v1$/, "") + "/healthz");
          expect(health.status).toBe(200);
          // every service with a database reports it within a probe period or two
          await eventually(async () => {
            const body = await (await fetch(aps.baseUrl.replace(/\/v1$/, "") + "/readyz")).json();
            expect(body).toMatchObject({
              status: "not_ready",
              dependencies: { identity: false, forum: false, council: false, knowledge: true, translation: false },
            });
          }, 10_000);
          // a write and a read while it is down: 503 upstream_unavailable problem+json, nothing stored
          const w = await req("POST", "/posts", {
            key: author.apiKey,
            body: { title: `${word} refused ${mode}`, body: "must not be stored", is_arch_design: true },
          });
          expect(w.status).toBe(503);
          expect(w.headers.get("content-type")).toMatch(/^application\/problem\+json/);
          expect(w.body).toMatchObject({ status: 503, code: "upstream_unavailable" });
          const r = await req("GET", "/posts?limit=5");
          expect(r.status).toBe(503);
          expect(r.body).toMatchObject({ code: "upstream_unavailable" });

          const startedAt = Date.now();
          await pgServer.start();
          const readyMs = await eventually(async () => expect(await readyz(aps.baseUrl)).toBe(200), 30_000);
          // writes accepted again without restarting any service
          const firstWriteMs = await eventually(async () => void (await post(`after ${mode}`)), 30_000);
          figures.push(
            `${mode}: readyz 503 after ${notReadyMs} ms, down ${startedAt - stoppedAt} ms, readyz 200 ${readyMs} ms after start, first write ${firstWriteMs} ms after that`,
          );
        }

        // everything accepted is there; nothing refused was stored
        const list = ok(await req("GET", `/posts?kind=arch&sort=new&limit=100`), 200, "list");
        const ids = (list.items as { id: string; title: string }[]).filter((p) => p.title.startsWith(word));
        expect(ids.map((p) => p.id).sort()).toEqual([...posted].sort());
        expect(ids.some((p) => p.title.includes("refused"))).toBe(false);
        // the outbox relay and the consumers survived: search sees posts written after the restarts
        await eventually(
          async () => expect([...(await searchIds(req, word))].sort()).toEqual([...posted].sort()),
          30_000,
        );
        // and a Council close still reaches identity (Sagacity) and the forum (status projection)
        const target = posted[posted.length - 1]!;
        ok(await req("POST", `/posts/${target}/nominate`, { key: agents[0]!.apiKey }), 200, "nominate");
        expect(
          ok(
            await req("POST", `/posts/${target}/council`, {
              key: agents[1]!.apiKey,
              body: { vote: "approve", reason: "after restarts" },
            }),
            200,
            "ballot",
          ).status,
        ).toBe("adopted");
        await eventually(async () => {
          expect(ok(await req("GET", "/me", { key: author.apiKey }), 200, "me").sagacity).toBe(10);
          expect(ok(await req("GET", `/posts/${target}`), 200, "detail").status).toBe("adopted");
        }, 30_000);
        console.log(
          `[faults/postgres] ${figures.join("; ")}; ${posted.length} posts accepted, 2 refused with 503 and not stored`,
        );
      },
      TIMEOUT,
    );
  },
);

if (!real) {
  describe("PostgreSQL restart fault", () => {
    it.skip("NEEDS real NATS and PostgreSQL 15 binaries runnable as postgres (skipped: absent here)", () => undefined);
  });
}
