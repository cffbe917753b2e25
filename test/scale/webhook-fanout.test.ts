import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  createLogger,
  DEFAULT_ALLOWED_PORTS,
  migrate,
  openDatabase,
  PLATFORM_MIGRATIONS_DIR,
  withTransaction,
  type Database,
  type Tx,
} from "@aps/platform";
import {
  ADMIN_DATABASE_URL,
  createTestDatabase,
  eventually,
  hasPostgres,
  pause,
  scaled,
  type TestDatabase,
} from "@aps/testkit";
import { poolForConcurrency } from "@aps/notifications/config";
import { ingest } from "@aps/notifications/store/feed";
import { WebhookStore } from "@aps/notifications/store/webhooks";
import { DeliveryWorker } from "@aps/notifications/webhooks/worker";

/**
 * Webhook fan-out at scale (its "Done means", docs/design/notifications.md#per-endpoint-feed-cursor), on the real
 * PostgreSQL with the service's own ingest and delivery worker (production settings: the default
 * retry schedule, 10 s attempt deadline, 16 attempts at once, 1 s safety poll): 50 `*` webhooks on
 * local receivers, 3 of them slow (two answer after 9 s, one drips its answer past the deadline),
 * 10 public events a second for 30 s. Every healthy endpoint receives every event, with a delivery
 * lag (ingest commit → the receiver has the request) p99 under 5 s; the ingest transaction writes
 * O(1) rows per event whatever the number of webhooks (it wrote a delivery row per webhook before).
 * Prints the figures (lag p50/p95/p99/max, rows written per event).
 */
// the worker's warnings (a failed claim or record) show in the test's output
const log = createLogger("webhook-fanout-test", "warn");
const MIGRATIONS_DIR = fileURLToPath(new URL("../../services/notifications/src/store/migrations", import.meta.url));
const pgUp = await hasPostgres();
if (!pgUp) console.warn(`\n!! webhook-fanout.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — SKIPPED.\n`);

const HOOKS = 50;
const SLOW = new Map<number, "late" | "drip">([
  [7, "late"],
  [23, "late"],
  [41, "drip"],
]);
const RATE = 10; // events per second
const SECONDS = Number(process.env.FANOUT_SECONDS ?? 30);

/**
 * The receivers' process: one HTTP server, `/h/<i>` is endpoint i; a healthy one answers 204 at
 * once, a `late` one after 9 s, a `drip` one writes a byte every 500 ms past the attempt deadline.
 * Reports `[i, eventId, ms]` of each healthy arrival to the parent every 50 ms.
 */
const RECEIVERS = `
import { createServer } from "node:http";
const slow = new Map(JSON.parse(process.env.SLOW));
let got = [];
setInterval(() => { if (got.length) { process.send({ got }); got = []; } }, 50);
const server = createServer((req, res) => {
  const i = Number(req.url.split("/").at(-1));
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    const mode = slow.get(i);
    if (mode === "late") {
      const t = setTimeout(() => res.writeHead(204).end(), 9000);
      res.on("close", () => clearTimeout(t));
      return;
    }
    if (mode === "drip") {
      res.writeHead(200);
      const t = setInterval(() => res.write("."), 500);
      res.on("close", () => clearInterval(t));
      return;
    }
    got.push([i, JSON.parse(body).eventId, Date.now()]);
    res.writeHead(204).end();
  });
});
server.keepAliveTimeout = 1;
server.listen(0, "127.0.0.1", () => process.send({ port: server.address().port }));
process.on("disconnect", () => process.exit(0));
`;

/**
 * The machine's pressure stall totals (Linux PSI, µs a task waited): `cpu` and `io` "some" lines,
 * or undefined where /proc/pressure is absent. Their growth over the load tells a run slowed by the
 * machine (CPU or disk shared with other jobs) from one slowed by the worker.
 */
const pressure = (): { cpu: number; io: number } | undefined => {
  try {
    const some = (r: string) => Number(/^some .*total=(\d+)/m.exec(readFileSync(`/proc/pressure/${r}`, "utf8"))?.[1]);
    return { cpu: some("cpu"), io: some("io") };
  } catch {
    return undefined;
  }
};

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] ?? NaN;
};

(pgUp ? describe : describe.skip)(
  "webhook fan-out: 50 `*` webhooks, 3 slow, 10 events/s for 30 s (real PostgreSQL)",
  () => {
    let tdb: TestDatabase;
    let db: Database;
    let receivers: ChildProcess;
    let url = "";
    /** Arrival time (ms) of each event id at each endpoint index. */
    const arrived = new Map<number, Map<string, number>>();

    beforeAll(async () => {
      tdb = await createTestDatabase();
      // the pool the service opens for WEBHOOK_CONCURRENCY 16 (docs/design/notifications.md#connection-pool)
      db = await openDatabase({ url: tdb.url, schema: "notifications", poolSize: poolForConcurrency(16), log });
      await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log);
      // the receivers run in a process of their own, as they would on other machines: the test's
      // process (ingest + delivery worker) does not also serve 470 requests a second
      receivers = spawn(process.execPath, ["--input-type=module", "-e", RECEIVERS], {
        stdio: ["ignore", "ignore", "inherit", "ipc"],
        env: { ...process.env, SLOW: JSON.stringify([...SLOW]) },
      });
      const port = await new Promise<number>((resolve, reject) => {
        receivers.once("error", reject);
        receivers.on("message", (m: { port?: number; got?: [number, string, number][] }) => {
          if (m.port) resolve(m.port);
          for (const [i, eventId, at] of m.got ?? []) {
            const seen = arrived.get(i) ?? new Map<string, number>();
            if (!seen.has(eventId)) seen.set(eventId, at);
            arrived.set(i, seen);
          }
        });
      });
      url = `http://127.0.0.1:${port}/h`;
    });
    afterAll(async () => {
      receivers?.kill();
      await db?.close();
      await tdb?.drop();
    });

    it("every healthy endpoint gets every event, lag p99 < 5 s × the time scale (timing bound); the ingest writes O(1) rows per event", async () => {
      const worker = new DeliveryWorker(
        db.pool,
        {
          retrySchedule: [5_000, 300_000, 1_800_000],
          attemptTimeoutMs: 10_000,
          concurrency: 16,
          pollMs: 1_000,
          policy: { allowPrivate: true, allowedPorts: DEFAULT_ALLOWED_PORTS },
        },
        log,
      );
      const hooks = new WebhookStore(db.pool, () => worker.notify());
      const secret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
      for (let i = 0; i < HOOKS; i++) await hooks.create(`ag_${i}`, `${url}/${i}`, ["*"], secret);
      worker.start();

      const committed = new Map<string, number>();
      /** How long each ingest transaction took, ms (begin → commit): the database's commit latency as the load saw it. */
      const ingestTx: number[] = [];
      let n = 0;
      /** Ingests public event `k` as the feed consumer does; `inTx` runs in its transaction after the ingest. */
      const emit = async <T>(k: number, inTx: (tx: Tx) => Promise<T>): Promise<T> => {
        const eventId = `ev_${k}`;
        const began = Date.now();
        const out = await withTransaction(db.pool, async (tx) => {
          await ingest(
            tx,
            { eventId, occurredAt: new Date().toISOString() },
            [
              {
                type: "post.created",
                postId: `p_${k}`,
                actorId: "ag_a",
                postAuthorId: "ag_a",
                audience: "none",
                data: { postId: `p_${k}`, authorId: "ag_a", title: `t${k}`, link: `/v1/posts/p_${k}` },
              },
            ],
            undefined,
            () => worker.notify(),
          );
          return inTx(tx);
        });
        committed.set(eventId, Date.now());
        ingestTx.push(Date.now() - began);
        return out;
      };
      try {
        // Rows the ingest transaction writes per event, every endpoint idle: those whose xmin is the
        // transaction's own id, in each table it may write (10 events, before the load).
        const TABLES = ["feed_events", "inbox_items", "webhooks", "webhook_deliveries"];
        const perTable = new Map<string, number>();
        for (let k = 1; k <= 10; k++)
          await emit(-k, async (tx) => {
            for (const t of TABLES) {
              const r = await tx.query<{ n: number }>(
                `SELECT count(*)::int AS n FROM ${t} WHERE xmin = pg_current_xact_id()::xid`,
              );
              perTable.set(t, (perTable.get(t) ?? 0) + r.rows[0]!.n);
            }
          });
        const rowsPerEvent = Object.fromEntries([...perTable].map(([t, k]) => [t, k / 10]));
        console.log(`webhook fan-out: rows written per event by the ingest: ${JSON.stringify(rowsPerEvent)}`);
        committed.clear();
        ingestTx.length = 0;
        const stallsBefore = pressure();

        // requests waiting for a pooled connection (ingest and worker share the pool, as in the
        // service), sampled every 100 ms from the load's start until the last delivery or the wait's end
        const waits: number[] = [];
        const sampler = setInterval(() => waits.push(db.pool.waitingCount), 100);
        const t0 = Date.now();
        const inFlight: Promise<void>[] = [];
        while (n < RATE * SECONDS) {
          const due = t0 + (n * 1000) / RATE;
          if (Date.now() < due) await pause(due - Date.now(), "the load's pace: RATE events a second");
          inFlight.push(emit(n++, async () => undefined));
        }
        await Promise.all(inFlight);
        const ingestMs = Date.now() - t0;

        const healthy = [...Array(HOOKS).keys()].filter((i) => !SLOW.has(i));
        const lags: number[] = [];
        let missing = 0;
        try {
          await eventually(
            async () => {
              for (const i of healthy)
                expect([...committed.keys()].filter((id) => !arrived.get(i)?.has(id))).toEqual([]);
            },
            15_000,
            250,
          );
        } finally {
          clearInterval(sampler);
          for (const i of healthy)
            for (const [id, at] of committed) {
              const got = arrived.get(i)?.get(id);
              if (got === undefined) missing++;
              else lags.push(Math.max(0, got - at));
            }
          // deliveries to healthy endpoints that needed more than one attempt (a failed attempt waits
          // the retry schedule's first 5 s: the lag's tail when it happens)
          const retried = await db.pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
             WHERE d.attempts > 1 AND NOT (split_part(w.url, '/', 5)::int = ANY($1::int[]))`,
            [[...SLOW.keys()]],
          );
          // the endpoints whose slowest delivery took longest: index, that lag (ms), when its event
          // was committed (s into the load), and the endpoint's row now (for a failure's diagnosis)
          const firstCommit = Math.min(...committed.values());
          const worst = healthy
            .map((i) => {
              let lag = 0;
              let at = 0;
              for (const [id, c] of committed) {
                const l = (arrived.get(i)?.get(id) ?? Infinity) - c;
                if (l > lag) [lag, at] = [l, Math.round((c - firstCommit) / 100) / 10];
              }
              return { i, lag, at };
            })
            .sort((x, y) => y.lag - x.lag)
            .slice(0, 8);
          const rows = await db.pool.query<{
            i: number;
            slow: boolean;
            window_full: boolean;
            leased: boolean;
            pending: number;
          }>(
            `SELECT split_part(w.url, '/', 5)::int AS i, w.slow, w.window_full, coalesce(w.lease_until > now(), false) AS leased,
                    (SELECT count(*)::int FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.status = 'pending') AS pending
             FROM webhooks w WHERE split_part(w.url, '/', 5)::int = ANY($1::int[])`,
            [worst.map((w) => w.i)],
          );
          console.log(
            `webhook fan-out: slowest endpoints ${JSON.stringify(worst.map((w) => ({ ...w, ...rows.rows.find((r) => r.i === w.i) })))}`,
          );
          // the slowest endpoint's deliveries that took over 5 s: when they were queued (materialised
          // from the feed) and delivered, s into the load — queued early and sent late means they
          // waited while queued (a lease, a due time); queued late means the endpoint was not claimed
          const late = await db.pool.query<{ n: number; q0: number; q1: number; d0: number; d1: number }>(
            `SELECT count(*)::int AS n,
                    min(extract(epoch FROM d.created_at) * 1000)::float8 AS q0, max(extract(epoch FROM d.created_at) * 1000)::float8 AS q1,
                    min(extract(epoch FROM d.delivered_at) * 1000)::float8 AS d0, max(extract(epoch FROM d.delivered_at) * 1000)::float8 AS d1
             FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN feed_events f ON f.seq = d.feed_seq
             WHERE split_part(w.url, '/', 5)::int = $1 AND d.delivered_at - f.recorded_at > interval '5 seconds'`,
            [worst[0]?.i ?? -1],
          );
          const s = (ms: number | null) => (ms === null ? null : Math.round((ms - firstCommit) / 100) / 10);
          const l = late.rows[0]!;
          console.log(
            `webhook fan-out: endpoint ${worst[0]?.i}'s deliveries over 5 s: ${JSON.stringify({ n: l.n, queued: [s(l.q0), s(l.q1)], delivered: [s(l.d0), s(l.d1)] })}`,
          );
          const stallsAfter = pressure();
          const loadMs = Date.now() - t0;
          const fig = {
            events: committed.size,
            // ingest transactions' duration, ms: slow commits here mean a slow database or disk
            ingestTxMs: { p50: quantile(ingestTx, 0.5), p99: quantile(ingestTx, 0.99), max: Math.max(...ingestTx) },
            // share of the run's wall time some task of the machine stalled on CPU / on I/O (PSI)
            machineStall:
              stallsBefore && stallsAfter
                ? {
                    cpu: Number(((stallsAfter.cpu - stallsBefore.cpu) / 1000 / loadMs).toFixed(2)),
                    io: Number(((stallsAfter.io - stallsBefore.io) / 1000 / loadMs).toFixed(2)),
                  }
                : "no /proc/pressure",
            retriedHealthy: retried.rows[0]!.n,
            ingestMs,
            healthyEndpoints: healthy.length,
            deliveriesReceived: lags.length,
            missing,
            // healthy endpoints whose slowest delivery took over 5 s
            endpointsOver5s: healthy.filter((i) =>
              [...committed].some(([id, at]) => (arrived.get(i)?.get(id) ?? Infinity) - at > 5_000),
            ).length,
            poolSize: db.pool.options.max,
            // share of samples with a request waiting for a connection, and the most waiting at once
            poolWaitShare: Number((waits.filter((w) => w > 0).length / Math.max(1, waits.length)).toFixed(3)),
            poolWaitMax: Math.max(0, ...waits),
            lagMs: {
              p50: quantile(lags, 0.5),
              p95: quantile(lags, 0.95),
              p99: quantile(lags, 0.99),
              max: Math.max(...lags),
            },
          };
          console.log(`webhook fan-out figures: ${JSON.stringify(fig)}`);
        }
        // one feed row, nothing per webhook
        expect(rowsPerEvent).toEqual({ feed_events: 1, inbox_items: 0, webhooks: 0, webhook_deliveries: 0 });
        expect(missing).toBe(0);
        // the capacity target, 5 s on a quiet machine (the full-size bench reports it, docs/capacity.md),
        // stretched like every deadline by the load now (docs/design/tests.md "Time in assertions"): beside
        // other work on this 2-core machine it measured 7.0 s at load ~9
        expect(quantile(lags, 0.99)).toBeLessThan(scaled(5_000));
      } finally {
        await worker.stop();
      }
    }, 90_000);
  },
);
