import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import type pg from "pg";
import {
  createLogger,
  DEFAULT_ALLOWED_PORTS,
  migrate,
  openDatabase,
  PLATFORM_MIGRATIONS_DIR,
  type Database,
  type Logger,
} from "@aps/platform";
import { ADMIN_DATABASE_URL, createTestDatabase, hasPostgres } from "@aps/testkit";
import { DeliveryWorker, type DeliveryOptions } from "./worker.js";

/**
 * Test fixture (not built into dist) for the delivery worker's suites on the real PostgreSQL
 * (docs/design/notifications.md#attempts, docs/design/tests.md): a fresh, migrated notifications
 * database, loopback receivers, a worker with test settings, and due deliveries queued by SQL.
 */

const MIGRATIONS_DIR = fileURLToPath(new URL("../store/migrations", import.meta.url));

/** Whether PostgreSQL is reachable (testkit's ADMIN_DATABASE_URL), asked once per test file. */
const pgUp = await hasPostgres();

/** A webhook signing secret (`whsec_` + 32 bytes, base64), the same for every test endpoint. */
export const TEST_SECRET = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;

/** The body every queued test delivery carries. */
const TEST_BODY = '{"type":"post.created","timestamp":"t","data":{}}';

/**
 * `describe` on the real PostgreSQL: `title` gets "(real PostgreSQL; SKIPPED when none is
 * reachable)", and without PostgreSQL the file says loudly that it skips (`file` names it).
 */
export function describeOnPostgres(file: string, title: string, body: () => void): void {
  if (!pgUp)
    console.warn(`\n!! ${file}: NO POSTGRESQL at ${ADMIN_DATABASE_URL} — the real-PostgreSQL suite is SKIPPED.\n`);
  (pgUp ? describe : describe.skip)(`${title} (real PostgreSQL; SKIPPED when none is reachable)`, body);
}

/** A fresh notifications database: `handles` pools on it (replicas), the first one `db`. */
export interface WebhookTestStore {
  db: Database;
  dbs: Database[];
  log: Logger;
  /** Another pool on the same database (closed by `drop`); `poolSize` connections when given. */
  open(poolSize?: number): Promise<Database>;
  /** Closes every pool and drops the database. */
  drop(): Promise<void>;
}

/** Creates, migrates and opens a notifications database (`name`: the silent logger's name). */
export async function webhookTestStore(name: string, handles = 1): Promise<WebhookTestStore> {
  const log = createLogger(name, "silent");
  const tdb = await createTestDatabase();
  const dbs: Database[] = [];
  const open = async (poolSize?: number) => {
    const d = await openDatabase({ url: tdb.url, schema: "notifications", log, ...(poolSize ? { poolSize } : {}) });
    dbs.push(d);
    return d;
  };
  for (let i = 0; i < handles; i++) await open();
  await migrate(dbs[0]!, [PLATFORM_MIGRATIONS_DIR, MIGRATIONS_DIR], log);
  return {
    db: dbs[0]!,
    dbs,
    log,
    open,
    drop: async () => {
      for (const d of dbs) await d.close();
      await tdb.drop();
    },
  };
}

/** What a suite holds through `useWebhookTestStore`: its store (set in `beforeAll`) and its receivers. */
export interface WebhookSuite {
  store: WebhookTestStore;
  receivers: Receivers;
}

/**
 * Registers, in the calling `describe`, a `beforeAll` that creates the store (`name`, `handles`:
 * webhookTestStore) and an `afterAll` that closes the receivers and drops the store; returns the
 * suite's holder, whose `store` is set once `beforeAll` has run.
 */
export function useWebhookTestStore(name: string, handles = 1): WebhookSuite {
  const suite = { receivers: new Receivers() } as WebhookSuite;
  beforeAll(async () => {
    suite.store = await webhookTestStore(name, handles);
  });
  afterAll(async () => {
    await suite.receivers.closeAll();
    await (suite.store as WebhookTestStore | undefined)?.drop();
  });
  return suite;
}

/**
 * Loopback HTTP receivers standing in for webhook endpoints; `closeAll()` closes them
 * (their open connections first).
 */
export class Receivers {
  private readonly servers: Server[] = [];

  /** Listens on 127.0.0.1 with `handler`; resolves the base URL, `http://127.0.0.1:<port>/h`. */
  async listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
    const server = createServer(handler);
    this.servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/h`;
  }

  /**
   * A receiver that reads each request to its end, then calls `onRequest` (which answers);
   * resolves the base URL.
   */
  onEnd(onRequest: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
    return this.listen((req, res) => {
      req.resume();
      req.on("end", () => onRequest(req, res));
    });
  }

  /** Closes every receiver. */
  async closeAll(): Promise<void> {
    for (const s of this.servers.splice(0)) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  }
}

/**
 * A delivery worker on `pool` with test settings: retries after 100 ms, 2 s attempts, 2 slots, a
 * 50 ms safety poll, loopback targets allowed; `opts` replaces any of them.
 */
export function testWorker(pool: pg.Pool, log: Logger, opts: Partial<DeliveryOptions> = {}): DeliveryWorker {
  return new DeliveryWorker(
    pool,
    {
      retrySchedule: [100, 100, 100],
      attemptTimeoutMs: 2_000,
      concurrency: 2,
      pollMs: 50,
      policy: { allowPrivate: true, allowedPorts: DEFAULT_ALLOWED_PORTS },
      ...opts,
    },
    log,
  );
}

/** Registers a `*` endpoint `id` of agent `agentId` at `url`, with the test secret. */
export async function addEndpoint(pool: pg.Pool, id: string, url: string, agentId = "ag_o"): Promise<void> {
  await pool.query("INSERT INTO webhooks (id, agent_id, url, events, secret) VALUES ($1, $2, $3, '{*}', $4)", [
    id,
    agentId,
    url,
    TEST_SECRET,
  ]);
}

/**
 * Queues one due delivery per entry of `ids` on endpoint `hook` (feed_seq `fromSeq` + index,
 * event `ev_<id>`, due now, oldest first by a microsecond each) and marks the endpoint due.
 */
export async function queueDeliveries(pool: pg.Pool, hook: string, ids: string[], fromSeq = 0): Promise<void> {
  for (const [i, id] of ids.entries())
    await pool.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, feed_seq, type, event_id, body, next_attempt_at)
       VALUES ($1, $2, $3::bigint, 'post.created', $4, $5, now() + $6::int * interval '1 microsecond')`,
      [id, hook, fromSeq + i, `ev_${id}`, TEST_BODY, i],
    );
  await pool.query("UPDATE webhooks SET next_due_at = now() WHERE id = $1", [hook]);
}
