import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
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
import { ADMIN_DATABASE_URL, createTestDatabase, eventually, hasPostgres, type TestDatabase } from "@aps/testkit";
import { ingest } from "@aps/notifications/store/feed";
import { WebhookStore } from "@aps/notifications/store/webhooks";
import { DeliveryWorker } from "@aps/notifications/webhooks/worker";

/**
 * Webhook fan-out at scale (issue 31 item 4 and its "Done means", docs/adr/0192), on the real
 * PostgreSQL with the service's own ingest and delivery worker (production settings: the default
 * retry schedule, 10 s attempt deadline, 16 attempts at once, 1 s safety poll): 50 `*` webhooks on
 * local receivers, 3 of them slow (two answer after 9 s, one drips its answer past the deadline),
 * 10 public events a second for 30 s. Every healthy endpoint receives every event, with a delivery
 * lag (ingest commit → the receiver has the request) p99 under 5 s; the ingest transaction writes
 * O(1) rows per event whatever the number of webhooks (it wrote a delivery row per webhook before).
 * Prints the figures (lag p50/p95/p99/max, rows written per event).
 */
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

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] ?? NaN;
};

(pgUp ? describe : describe.skip)(
  "webhook fan-out: 50 `*` webhooks, 3 slow, 10 events/s for 30 s (real PostgreSQL)",
  () => {
    let tdb: TestDatabase;
    let db: Database;
    let server: Server;
    let url = "";
    /** Arrival time (ms) of each event id at each endpoint index. */
    const arrived = new Map<number, Map<string, number>>();

    beforeAll(async () => {
      tdb = await createTestDatabase();
      db = await openDatabase({ url: tdb.url, schema: "notifications", log });
      await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log);
      server = createServer((req, res) => {
        const i = Number(req.url!.split("/").at(-1));
        let body = "";
        req.on("data", (c: Buffer) => (body += c.toString()));
        req.on("end", () => {
          const mode = SLOW.get(i);
          if (mode === "late") {
            const t = setTimeout(() => res.writeHead(204).end(), 9_000);
            res.on("close", () => clearTimeout(t));
            return;
          }
          if (mode === "drip") {
            res.writeHead(200);
            const t = setInterval(() => res.write("."), 500);
            res.on("close", () => clearInterval(t));
            return;
          }
          const { eventId } = JSON.parse(body) as { eventId: string };
          const m = arrived.get(i) ?? new Map<string, number>();
          if (!m.has(eventId)) m.set(eventId, Date.now());
          arrived.set(i, m);
          res.writeHead(204).end();
        });
      });
      server.keepAliveTimeout = 1;
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/h`;
    });
    afterAll(async () => {
      server?.closeAllConnections();
      await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
      await db?.close();
      await tdb?.drop();
    });

    it("every healthy endpoint gets every event, lag p99 < 5 s; the ingest writes O(1) rows per event", async () => {
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
      const t0 = Date.now();
      let n = 0;
      /** Ingests public event `k` as the feed consumer does; `inTx` runs in its transaction after the ingest. */
      const emit = async <T>(k: number, inTx: (tx: Tx) => Promise<T>): Promise<T> => {
        const eventId = `ev_${k}`;
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
        return out;
      };
      try {
        const inFlight: Promise<void>[] = [];
        while (n < RATE * SECONDS) {
          const due = t0 + (n * 1000) / RATE;
          if (Date.now() < due) await new Promise((r) => setTimeout(r, due - Date.now()));
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
              for (const i of healthy) expect(arrived.get(i)?.size ?? 0).toBe(committed.size);
            },
            15_000,
            250,
          );
        } finally {
          for (const i of healthy)
            for (const [id, at] of committed) {
              const got = arrived.get(i)?.get(id);
              if (got === undefined) missing++;
              else lags.push(Math.max(0, got - at));
            }
          const fig = {
            events: committed.size,
            ingestMs,
            healthyEndpoints: healthy.length,
            deliveriesReceived: lags.length,
            missing,
            lagMs: {
              p50: quantile(lags, 0.5),
              p95: quantile(lags, 0.95),
              p99: quantile(lags, 0.99),
              max: Math.max(...lags),
            },
          };
          console.log(`webhook fan-out figures: ${JSON.stringify(fig)}`);
        }
        expect(missing).toBe(0);
        expect(quantile(lags, 0.99)).toBeLessThan(5_000);

        // Rows the ingest transaction writes per event, once the load is over (every endpoint idle):
        // those whose xmin is the transaction's own id, in each table it may write.
        const TABLES = ["feed_events", "inbox_items", "webhooks", "webhook_deliveries"];
        const perTable = new Map<string, number>();
        for (let k = 0; k < 10; k++)
          await emit(n++, async (tx) => {
            for (const t of TABLES) {
              const r = await tx.query<{ n: number }>(
                `SELECT count(*)::int AS n FROM ${t} WHERE xmin = pg_current_xact_id()::xid`,
              );
              perTable.set(t, (perTable.get(t) ?? 0) + r.rows[0]!.n / 10);
            }
          });
        console.log(
          `webhook fan-out: rows written per event by the ingest: ${JSON.stringify(Object.fromEntries(perTable))}`,
        );
        // one feed row, nothing per webhook
        expect(Object.fromEntries(perTable)).toEqual({
          feed_events: 1,
          inbox_items: 0,
          webhooks: 0,
          webhook_deliveries: 0,
        });
      } finally {
        await worker.stop();
      }
    }, 90_000);
  },
);
