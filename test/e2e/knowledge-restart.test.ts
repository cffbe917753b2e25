import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { forumLimits, loadConfig as forumConfig, startForum, type ForumHandle } from "@aps/forum";
import pg from "pg";
import { EmbeddedEngine, PostgresEngine, startKnowledge, type KnowledgeHandle } from "@aps/knowledge";
import {
  createLogger,
  ForumClient,
  JetStreamBus,
  openDatabase,
  openServiceDeps,
  type Database,
  type EventBus,
  serviceClient,
} from "@aps/platform";
import {
  httpClient,
  createTestDatabase,
  deleteTestStream,
  eventually,
  hasNats,
  hasPostgres,
  TEST_NATS_URL,
  uniqueBusNames,
  type TestDatabase,
} from "@aps/testkit";
import { startSystem } from "../support/system.js";
import { forum as forumProto } from "@aps/proto";

/**
 * The knowledge service's durable index across restarts, with a real forum on a real
 * PostgreSQL and real NATS JetStream, for both durable engines: the PostgreSQL index (docs/design/search-and-translation.md#the-postgresql-engine,
 * the all-in-one's) and the MiniSearch folder (docs/design/search-and-translation.md#resume-and-rebuild, `KNOWLEDGE_INDEX_DIR`). A restart
 * resumes from the stored index and the durable consumer — a post created while knowledge was down
 * is indexed, the forum is not re-read (`startup.rebuiltPosts` = 0) and no event applied before
 * the stop is applied again (the index's position counts applied events); an index of another
 * format is rebuilt from the forum.
 */
const ready = (await hasPostgres()) && (await hasNats());
if (!ready) console.warn("!! knowledge-restart.test.ts: PostgreSQL or NATS is not reachable — SKIPPED");
const d = ready ? describe : describe.skip;

const log = createLogger("knowledge-restart-test", "warn");

/** One durable engine under test: how to open it again (a new process would), read its position, age its format. */
interface Durable {
  open(): Promise<EmbeddedEngine | PostgresEngine>;
  applied(e: EmbeddedEngine | PostgresEngine): Promise<number>;
  ageFormat(): Promise<void>;
  startedFrom(e: EmbeddedEngine | PostgresEngine): string;
  cleanup(): Promise<void>;
}

/** The MiniSearch engine with its folder (docs/design/search-and-translation.md#resume-and-rebuild). */
function folderEngine(): Durable {
  const dir = mkdtempSync(join(tmpdir(), "aps-knowledge-restart-"));
  return {
    open: async () => new EmbeddedEngine({ dir }),
    applied: async (e) => (e as EmbeddedEngine).positionNow().applied,
    ageFormat: async () => {
      const meta = JSON.parse(readFileSync(join(dir, "meta.json"), "utf8")) as { format: number };
      writeFileSync(join(dir, "meta.json"), JSON.stringify({ ...meta, format: meta.format - 1 }));
    },
    startedFrom: (e) => (e as EmbeddedEngine).startedFrom,
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The PostgreSQL index (docs/design/search-and-translation.md#the-postgresql-engine) in the `knowledge` schema of the forum's test database. */
function postgresEngine(url: () => string): Durable {
  const dbs: Database[] = [];
  return {
    open: async () => {
      const kdb = await openDatabase({ url: url(), schema: "knowledge", log, poolSize: 2 });
      dbs.push(kdb);
      return new PostgresEngine(kdb, log);
    },
    applied: async (e) => (await (e as PostgresEngine).state()).applied,
    ageFormat: async () => {
      await dbs[0]!.pool.query("UPDATE knowledge.index_state SET format = format - 1");
    },
    startedFrom: (e) => (e as PostgresEngine).startedFrom,
    cleanup: async () => {
      for (const x of dbs) await x.close();
    },
  };
}

for (const kind of ["postgres", "folder"] as const)
  d(
    `knowledge restart, ${kind === "postgres" ? "PostgreSQL index" : "MiniSearch folder"} (real forum, PostgreSQL, JetStream)`,
    () => {
      let db: TestDatabase;
      let names: ReturnType<typeof uniqueBusNames>;
      let forumBus: EventBus;
      let forum: ForumHandle;
      let client: ForumClient;
      let durable: Durable;
      const running: { k: KnowledgeHandle; bus: EventBus }[] = [];

      const connect = (name: string) =>
        JetStreamBus.connect({ servers: TEST_NATS_URL, ...names, connectionName: name, log });
      /** Starts knowledge on the durable index (a fresh engine and bus connection, as a new process would). */
      const startK = async () => {
        const bus = await connect("knowledge-t");
        const engine = await durable.open();
        const k = await startKnowledge({ bus, log }, { listenAddr: "127.0.0.1:0", forumAddr: forum.local, engine });
        running.push({ k, bus });
        await k.indexed;
        return { k, engine };
      };
      const stopK = async () => {
        const r = running.pop()!;
        await r.k.stop();
        await r.bus.close();
      };
      const propose = async (title: string, body: string) =>
        (
          await client.createPost({
            author: { agentId: "ag_restart", name: "Restart" },
            title,
            body,
            isArchDesign: true,
            idempotencyKey: "",
          })
        ).id;
      const found = async (k: KnowledgeHandle, q: string) =>
        (await k.engine.search(q, ["post"], 10)).hits.map((h) => h.id);

      beforeAll(async () => {
        db = await createTestDatabase();
        names = uniqueBusNames();
        forumBus = await connect("forum-t");
        const cfg = forumConfig({ DATABASE_URL: db.url, FORUM_LISTEN_ADDR: "127.0.0.1:0" });
        forum = await startForum(await openServiceDeps("forum", cfg, forumBus, log), {
          listenAddr: cfg.FORUM_LISTEN_ADDR,
          limits: forumLimits(cfg),
        });
        client = serviceClient(forumProto.ForumServiceDefinition, forum.local);
        durable = kind === "postgres" ? postgresEngine(() => db.url) : folderEngine();
      }, 60_000);
      afterAll(async () => {
        while (running.length > 0) await stopK();
        client?.close();
        await forum?.stop();
        await forumBus?.close();
        await deleteTestStream(names.stream);
        await durable?.cleanup();
        await db?.drop();
      });

      it("resumes from the stored position: a post created while knowledge was down is indexed, nothing is re-read", async () => {
        const first = await startK();
        expect(first.k.startup).toEqual({ restored: false, rebuiltPosts: 0 }); // empty index, empty forum
        const a = await propose(
          "Structured concurrency for council workers",
          "Task groups so cancellation reaches all.",
        );
        await eventually(async () => expect(await found(first.k, "concurrency")).toEqual([a]), 30_000, 50);
        expect(await durable.applied(first.engine)).toBe(1);
        await stopK();

        const b = await propose("Backpressure in the outbox relay", "Bound the relay's batches under load.");

        const second = await startK();
        expect(second.k.startup).toEqual({ restored: true, rebuiltPosts: 0 }); // the forum was not read
        expect(await found(second.k, "concurrency")).toEqual([a]); // from the snapshot, before any event
        await eventually(async () => expect(await found(second.k, "backpressure")).toEqual([b]), 30_000, 50);
        // one more event applied — b's creation — and not a's again: the consumer resumed where it stopped
        expect(await durable.applied(second.engine)).toBe(2);
        // typo tolerance and snippets (the stored plain text, or texts read from the forum) after the restore
        const hit = (await second.k.engine.search("backpresure relay", ["post"], 5)).hits[0];
        expect(hit?.id).toBe(b);
        expect(hit?.snippet).toBe("Bound the **relay's** batches under load."); // the body, not the title
        await stopK();
      }, 120_000);

      it("an index of an older format version is not used: the index is rebuilt from the forum, comments included", async () => {
        // comments written while knowledge is down, one of them hidden: the rebuild reads the
        // page's comments in one call (docs/design/search-and-translation.md#comments-in-search)
        const [p1, p2] = (
          await client.listPosts({ kind: "all", sort: "new", limit: 10, cursor: "", authorId: "", fullBodies: false })
        ).items;
        const reader = { agentId: "ag_reader", name: "Reader" };
        const comment = (postId: string, body: string) =>
          client.createComment({ postId, author: reader, body, idempotencyKey: "", parentId: "" });
        await comment(p1!.id, "Quorum sensing for the relay");
        await comment(p2!.id, "Quorum of councillors agrees");
        const hidden = await comment(p2!.id, "Quorum spam to hide");
        await client.moderateComment({ commentId: hidden.id, hidden: true, reason: "spam" });
        await durable.ageFormat();
        const third = await startK();
        expect(third.k.startup).toEqual({ restored: false, rebuiltPosts: 2 });
        expect(durable.startedFrom(third.engine)).toBe("format");
        expect((await third.k.engine.search("", ["post"], 10)).total).toBe(2);
        await eventually(
          async () => {
            const hits = (await third.k.engine.search("quorum", ["comment"], 10)).hits.map((h) => h.id);
            expect(hits).toHaveLength(2);
            expect(hits).not.toContain(hidden.id);
          },
          30_000,
          50,
        );
        await stopK();
        // the rebuild completed an index of the current format: the next start restores it
        const fourth = await startK();
        expect(fourth.k.startup).toEqual({ restored: true, rebuiltPosts: 0 });
        await stopK();
      }, 120_000);
    },
  );

describe("all-in-one restart (embedded PostgreSQL): the index lives in its knowledge schema", () => {
  it("a restart resumes the index (position kept, no rebuild) and finds the post", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "aps-knowledge-aio-"));
    /** The index's state, read from the running embedded server (docs/design/search-and-translation.md#the-postgresql-engine). */
    const state = async () => {
      const c = new pg.Client({ connectionString: readFileSync(join(dataDir, "postgres.url"), "utf8").trim() });
      await c.connect();
      try {
        return (await c.query("SELECT complete, applied::int, docs FROM knowledge.index_state")).rows[0] as {
          complete: boolean;
          applied: number;
          docs: number;
        };
      } finally {
        await c.end();
      }
    };
    try {
      let sys = await startSystem("embedded", { dataDir });
      let req = httpClient(sys.baseUrl);
      const agent = (await req("POST", "/join", { body: { name: "restarter" } })).body as { apiKey: string };
      const created = await req("POST", "/posts", {
        key: agent.apiKey,
        body: { title: "Idempotent outbox relay", body: "Relay batches survive restarts.", is_arch_design: true },
      });
      expect(created.status).toBe(201);
      const search = async () =>
        (await req("GET", "/knowledge/search?q=idempotent&tags=post")).body.hits as { id: string }[];
      await eventually(async () => expect((await search()).map((h) => h.id)).toEqual([created.body.id]), 30_000, 50);
      const before = await state();
      expect(before.complete).toBe(true);
      expect(before.applied).toBeGreaterThanOrEqual(1); // post_created
      await sys.stop();
      expect(existsSync(join(dataDir, "knowledge"))).toBe(false); // no MiniSearch folder any more

      sys = await startSystem("embedded", { dataDir });
      req = httpClient(sys.baseUrl);
      expect((await search()).map((h) => h.id)).toEqual([created.body.id]);
      // resumed, not rebuilt: the same position and documents (a rebuild would start again from 0 events)
      expect(await state()).toEqual(before);
      await sys.stop();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
