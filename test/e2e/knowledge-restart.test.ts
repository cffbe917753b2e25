import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { forumLimits, loadConfig as forumConfig, startForum, type ForumHandle } from "@aps/forum";
import { EmbeddedEngine, startKnowledge, type KnowledgeHandle } from "@aps/knowledge";
import { createLogger, ForumClient, JetStreamBus, openServiceDeps, type EventBus } from "@aps/platform";
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

/**
 * The knowledge service's durable index across restarts (issue 18, docs/adr/0132), with a real
 * forum on a real PostgreSQL and real NATS JetStream: a restart restores the index from its folder
 * and resumes the durable consumer — a post created while knowledge was down is indexed, the forum
 * is not re-read (`startup.rebuiltPosts` = 0) and no event applied before the stop is applied again
 * (the index's position counts applied events); a snapshot of another format is rebuilt from the forum.
 */
const ready = (await hasPostgres()) && (await hasNats());
if (!ready) console.warn("!! knowledge-restart.test.ts: PostgreSQL or NATS is not reachable — SKIPPED");
const d = ready ? describe : describe.skip;

const log = createLogger("knowledge-restart-test", "warn");

d("knowledge restart (real forum, PostgreSQL, JetStream)", () => {
  let db: TestDatabase;
  let names: ReturnType<typeof uniqueBusNames>;
  let forumBus: EventBus;
  let forum: ForumHandle;
  let client: ForumClient;
  let dir: string;
  const running: { k: KnowledgeHandle; bus: EventBus }[] = [];

  const connect = (name: string) =>
    JetStreamBus.connect({ servers: TEST_NATS_URL, ...names, connectionName: name, log });
  /** Starts knowledge on the folder `dir` (a fresh engine and bus connection, as a new process would). */
  const startK = async () => {
    const bus = await connect("knowledge-t");
    const engine = new EmbeddedEngine({ dir });
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
  const found = async (k: KnowledgeHandle, q: string) => (await k.engine.search(q, ["post"], 10)).hits.map((h) => h.id);

  beforeAll(async () => {
    db = await createTestDatabase();
    names = uniqueBusNames();
    forumBus = await connect("forum-t");
    const cfg = forumConfig({ DATABASE_URL: db.url, FORUM_LISTEN_ADDR: "127.0.0.1:0" });
    forum = await startForum(await openServiceDeps("forum", cfg, forumBus, log), {
      listenAddr: cfg.FORUM_LISTEN_ADDR,
      limits: forumLimits(cfg),
    });
    client = new ForumClient(forum.local);
    dir = mkdtempSync(join(tmpdir(), "aps-knowledge-restart-"));
  }, 60_000);
  afterAll(async () => {
    while (running.length > 0) await stopK();
    client?.close();
    await forum?.stop();
    await forumBus?.close();
    await deleteTestStream(names.stream);
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("resumes from the stored position: a post created while knowledge was down is indexed, nothing is re-read", async () => {
    const first = await startK();
    expect(first.k.startup).toEqual({ restored: false, rebuiltPosts: 0 }); // empty folder, empty forum
    const a = await propose("Structured concurrency for council workers", "Task groups so cancellation reaches all.");
    await eventually(async () => expect(await found(first.k, "concurrency")).toEqual([a]), 30_000, 50);
    expect(first.engine.positionNow().applied).toBe(1);
    await stopK();

    const b = await propose("Backpressure in the outbox relay", "Bound the relay's batches under load.");

    const second = await startK();
    expect(second.k.startup).toEqual({ restored: true, rebuiltPosts: 0 }); // the forum was not read
    expect(await found(second.k, "concurrency")).toEqual([a]); // from the snapshot, before any event
    await eventually(async () => expect(await found(second.k, "backpressure")).toEqual([b]), 30_000, 50);
    // one more event applied — b's creation — and not a's again: the consumer resumed where it stopped
    expect(second.engine.positionNow().applied).toBe(2);
    // typo tolerance and snippets (texts read from the forum for the page) after the restore
    const hit = (await second.k.engine.search("backpresure relay", ["post"], 5)).hits[0];
    expect(hit?.id).toBe(b);
    expect(hit?.snippet).toBe("Bound the **relay's** batches under load."); // the body, read from the forum
    await stopK();
  }, 120_000);

  it("a snapshot of an older format version is not used: the index is rebuilt from the forum", async () => {
    const meta = JSON.parse(readFileSync(join(dir, "meta.json"), "utf8")) as { format: number };
    writeFileSync(join(dir, "meta.json"), JSON.stringify({ ...meta, format: meta.format - 1 }));
    const third = await startK();
    expect(third.k.startup).toEqual({ restored: false, rebuiltPosts: 2 });
    expect(third.engine.startedFrom).toBe("format");
    expect((await third.k.engine.search("", ["post"], 10)).total).toBe(2);
    await stopK();
    // the rebuild wrote a snapshot of the current format: the next start restores it
    const fourth = await startK();
    expect(fourth.k.startup).toEqual({ restored: true, rebuiltPosts: 0 });
    await stopK();
  }, 120_000);
});

describe("all-in-one restart (embedded PostgreSQL): the index lives in APS_DATA_DIR/knowledge", () => {
  it("a restart restores the index from the data folder (position kept, no rebuild) and finds the post", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "aps-knowledge-aio-"));
    const meta = () =>
      JSON.parse(readFileSync(join(dataDir, "knowledge", "meta.json"), "utf8")) as {
        generation: number;
        position: { applied: number };
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
      await sys.stop();
      expect(existsSync(join(dataDir, "knowledge", "meta.json"))).toBe(true);
      const before = meta();
      expect(before.position.applied).toBeGreaterThanOrEqual(1); // post_created (and nothing re-read)

      sys = await startSystem("embedded", { dataDir });
      req = httpClient(sys.baseUrl);
      expect((await search()).map((h) => h.id)).toEqual([created.body.id]);
      await sys.stop();
      // restored, not rebuilt: a rebuild clears the folder and starts again at generation 1, position 0
      expect(meta()).toEqual(before);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
