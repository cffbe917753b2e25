import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import {
  createLogger,
  DEFAULT_ALLOWED_PORTS,
  migrate,
  openDatabase,
  PLATFORM_MIGRATIONS_DIR,
  type Database,
} from "@aps/platform";
import { ADMIN_DATABASE_URL, createTestDatabase, eventually, hasPostgres, type TestDatabase } from "@aps/testkit";
import { DeliveryWorker } from "./worker.js";

/**
 * A delivery worker with no endpoint (docs/design/notifications.md#per-endpoint-feed-cursor), on
 * the real PostgreSQL: once a pass found no enabled endpoint, a feed event wakes no claim (a
 * deployment without webhooks spent a transaction of five statements per public event); an
 * endpoint registered meanwhile by another replica is still found by the safety poll.
 */
const log = createLogger("notifications-idle-test", "silent");
const MIGRATIONS_DIR = fileURLToPath(new URL("../store/migrations", import.meta.url));
const pgUp = await hasPostgres();
if (!pgUp)
  console.warn(`\n!! idle.test.ts: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — the real-PostgreSQL suite is SKIPPED.\n`);

(pgUp ? describe : describe.skip)(
  "a delivery worker without endpoints (real PostgreSQL; SKIPPED when none is reachable)",
  () => {
    let tdb: TestDatabase;
    let db: Database;
    let server: Server | undefined;
    /** Claim statements sent so far (the endpoint picks of a pass). */
    let claims = 0;
    beforeAll(async () => {
      tdb = await createTestDatabase();
      db = await openDatabase({ url: tdb.url, schema: "notifications", log });
      await migrate(db, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log);
      // every client the pool hands out counts the claim statements it is sent (the pool's own
      // `query` asks for a client with a callback, the worker's transactions with a promise)
      const pool = db.pool as unknown as { connect: (cb?: (...a: unknown[]) => void) => unknown };
      const connect = pool.connect.bind(db.pool);
      const counted = (c: { query: (...a: unknown[]) => unknown; counted?: boolean }) => {
        if (c.counted) return;
        c.counted = true;
        const query = c.query.bind(c);
        c.query = (...a: unknown[]) => {
          const text = typeof a[0] === "string" ? a[0] : ((a[0] as { text?: string })?.text ?? "");
          if (/FROM webhooks w\b/.test(text)) claims++;
          return query(...a);
        };
      };
      pool.connect = (cb?: (...a: unknown[]) => void) => {
        if (cb)
          return connect((...r: unknown[]) => {
            if (r[1]) counted(r[1] as never);
            cb(...r);
          });
        return (connect() as Promise<never>).then((c) => (counted(c), c));
      };
    });
    afterAll(async () => {
      server?.closeAllConnections();
      await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
      await db?.close();
      await tdb?.drop();
    });

    const worker = (pollMs: number) =>
      new DeliveryWorker(
        db.pool,
        {
          retrySchedule: [100],
          attemptTimeoutMs: 2_000,
          concurrency: 2,
          pollMs,
          policy: { allowPrivate: true, allowedPorts: DEFAULT_ALLOWED_PORTS },
        },
        log,
      );

    it("feed events wake no claim once a pass found no endpoint; a local registration (notify) does", async () => {
      const w = worker(600_000);
      w.start();
      await eventually(async () => expect(claims).toBeGreaterThan(0), 10_000, 20);
      await w.stop(); // the first pass is over: it found no endpoint
      const afterFirst = claims;
      w.start(); // a pass at start, like the first
      await w.stop();
      const perPass = claims - afterFirst;
      expect(perPass).toBeGreaterThan(0);
      w.start();
      await w.stop();
      const idle = claims;
      // with no endpoint, events stored in the feed start no pass (stop awaits any pass they started)
      (w as unknown as { loop: { halted: boolean } }).loop.halted = false;
      for (let i = 0; i < 20; i++) w.feedAdvanced();
      await w.stop();
      expect(claims).toBe(idle);
      // a registration on this replica wakes it
      (w as unknown as { loop: { halted: boolean } }).loop.halted = false;
      w.notify();
      await w.stop();
      expect(claims).toBe(idle + perPass);
    });

    it("an endpoint another replica registered is found by the safety poll and served", async () => {
      const got: string[] = [];
      server = createServer((req, res) => {
        req.resume();
        req.on("end", () => {
          got.push(String(req.headers["webhook-id"]));
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/h`;
      const w = worker(50);
      w.start();
      try {
        const before = claims;
        await eventually(async () => expect(claims).toBeGreaterThan(before), 10_000, 20);
        // written by "another replica": no wake reaches this worker
        await db.pool.query(
          "INSERT INTO webhooks (id, agent_id, url, events, secret) VALUES ('wh_other', 'ag_o', $1, '{*}', $2)",
          [url, `whsec_${Buffer.alloc(32, 7).toString("base64")}`],
        );
        await db.pool.query(
          `INSERT INTO webhook_deliveries (id, webhook_id, feed_seq, type, event_id, body, next_attempt_at)
         VALUES ('msg_other', 'wh_other', 1, 'post.created', 'ev_other', '{"type":"post.created","timestamp":"t","data":{}}', now())`,
        );
        await db.pool.query("UPDATE webhooks SET next_due_at = now() WHERE id = 'wh_other'");
        w.feedAdvanced();
        await eventually(async () => expect(got).toEqual(["msg_other"]), 10_000, 20);
      } finally {
        await w.stop();
      }
    });
  },
);
