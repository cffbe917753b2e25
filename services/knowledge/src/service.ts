import {
  ApsError,
  databaseOptionsOf,
  serviceClient,
  type ForumClient,
  migrateSchema,
  grpcServerTuningOf,
  internalTrustOf,
  openDatabase,
  openEventBus,
  startGrpcServer,
  stopInOrder,
  type ApsGrpcService,
  type Database,
  type EventBus,
  type GrpcServerTuning,
  type InternalTrust,
  type LocalEndpoint,
  type Logger,
  type ServiceTarget,
  type Subscription,
} from "@aps/platform";
import { knowledge, forum } from "@aps/proto";
import { loadConfig, type KnowledgeConfig } from "./config.js";
import { MIGRATIONS_DIR } from "./store/postgres-engine.js";
import { EmbeddedEngine, type KnowledgeDoc, type SearchEngine, type TextSource } from "./engine.js";
import { consumePostChanges } from "./events/post-index.js";
import { statusMemory } from "./events/status-memory.js";
import { knowledgeHandlers } from "./grpc/handlers.js";
import { MeiliEngine } from "./meili.js";
import { allPosts, commentDocument, commentsOf, docsDocuments, postDocument } from "./sources.js";
import { PostgresEngine } from "./store/postgres-engine.js";

/** What `startKnowledge` needs. */
export interface KnowledgeOptions {
  listenAddr: string;
  /** The forum: its gRPC address (`FORUM_GRPC_ADDR`), or in the all-in-one its in-process endpoint (docs/design/services.md#in-process-transport). */
  forumAddr: ServiceTarget<typeof forum.ForumServiceDefinition>;
  /** Search engine; default: the embedded one. */
  engine?: SearchEngine;
  /** Reference pages folder (default: the repository's docs/reference). */
  docsDir?: string | undefined;
}

/** A running knowledge service. */
export interface KnowledgeHandle {
  port: number;
  engine: SearchEngine;
  /** The service in-process, for the clients of the all-in-one (docs/design/services.md#in-process-transport). */
  local: LocalEndpoint<typeof knowledge.KnowledgeServiceDefinition>;
  /** Resolves when the index is complete: at once after a restore, else when the re-index of the forum's posts has finished. */
  indexed: Promise<void>;
  /**
   * How the index started (docs/design/search-and-translation.md#resume-and-rebuild): `restored` from its snapshot + log (the forum was not
   * read), else rebuilt; `rebuiltPosts` counts the posts read from the forum for it (0 after a restore).
   */
  startup: { restored: boolean; rebuiltPosts: number };
  stop(): Promise<void>;
}

/**
 * The engine the config asks for: Meilisearch when `MEILISEARCH_URL` is set; else PostgreSQL's
 * full-text index in `store.db` when given (docs/design/search-and-translation.md#the-postgresql-engine: the all-in-one's database, or
 * `KNOWLEDGE_DATABASE_URL`); else the MiniSearch engine — durable under `KNOWLEDGE_INDEX_DIR` when
 * that is set (docs/design/search-and-translation.md#resume-and-rebuild), in memory otherwise.
 */
export function engineFromConfig(
  cfg: {
    MEILISEARCH_URL?: string | undefined;
    MEILISEARCH_API_KEY?: string | undefined;
    MEILISEARCH_INDEX?: string;
    KNOWLEDGE_INDEX_DIR?: string | undefined;
  },
  store?: { db: Database; log: Logger },
): SearchEngine {
  if (cfg.MEILISEARCH_URL)
    return new MeiliEngine({
      url: cfg.MEILISEARCH_URL,
      apiKey: cfg.MEILISEARCH_API_KEY,
      index: cfg.MEILISEARCH_INDEX ?? "aps-knowledge",
    });
  if (store) return new PostgresEngine(store.db, store.log);
  return new EmbeddedEngine({ dir: cfg.KNOWLEDGE_INDEX_DIR });
}

/**
 * Whether the knowledge service should open a database for its index (docs/design/search-and-translation.md#the-postgresql-engine): no
 * Meilisearch and no MiniSearch folder chosen. The database is KNOWLEDGE_DATABASE_URL's, or in the
 * all-in-one its own (`ServiceContext.databaseUrl`, see {@link knowledgeService}).
 */
export function wantsDatabase(cfg: {
  MEILISEARCH_URL?: string | undefined;
  KNOWLEDGE_INDEX_DIR?: string | undefined;
}): boolean {
  return !cfg.MEILISEARCH_URL && !cfg.KNOWLEDGE_INDEX_DIR;
}

/**
 * Starts the knowledge service (docs/design/search-and-translation.md#search-engines): indexes the reference pages, serves gRPC (+ health)
 * on `opts.listenAddr`, keeps posts current from `forum.post_created`, `forum.post_on_agenda`,
 * `forum.post_moderated` (a hidden post leaves the index, docs/design/identity-and-abuse.md#hiding-posts-and-comments), `forum.post_edited`
 * (the new text and tags), `forum.post_withdrawn` and
 * the council's status events (the post is read from the forum by id; each change announced as
 * `knowledge.post_indexed` for the gateways' search caches), and re-indexes every post
 * of the forum in the background (retrying until the forum answers).
 */
export async function startKnowledge(
  deps: {
    bus: EventBus;
    log: Logger;
    trust?: InternalTrust | undefined;
    grpc?: GrpcServerTuning | undefined;
    /** Deadline of its calls to the forum, ms (GRPC_DEADLINE_MS); absent = 10 000. */
    callDeadlineMs?: number | undefined;
  },
  opts: KnowledgeOptions,
): Promise<KnowledgeHandle> {
  const { bus, log } = deps;
  const engine = opts.engine ?? new EmbeddedEngine();
  const forumClient = serviceClient(forum.ForumServiceDefinition, opts.forumAddr, {
    caller: deps.trust?.caller,
    deadlineMs: deps.callDeadlineMs,
  });
  const docs = docsDocuments(opts.docsDir);
  engine.useTexts?.(textsOf(docs, forumClient));
  /** Furthest status seen per recently named post (events may arrive before the forum's record; bounded). */
  const statusOf = statusMemory();
  let stopped = false;
  let sub: Subscription | undefined;
  const startup = { restored: false, rebuiltPosts: 0 };
  /** The engine prepared (its settings, the reference pages) and the post events consumed. */
  const prepare = async () => {
    await engine.init();
    startup.restored = engine.restored === true;
    if (startup.restored) {
      // pages of an older version that are gone from the manifest leave the index
      const fresh = new Set(docs.map((d) => d.id));
      const listed = await engine.search("", ["docs"], 1_000);
      await engine.remove(listed.hits.map((h) => h.id).filter((id) => !fresh.has(id)));
    }
    await engine.upsert(docs);
    sub = await consumePostChanges(bus, { engine, forum: forumClient, statusOf, log });
  };
  // An engine that cannot be reached at start (Meilisearch down) does not stop the service: it
  // serves — NOT_SERVING on its health, 503 `upstream_unavailable` on every search — and prepares
  // the engine again, with a pause growing to 15 s, until it answers (docs/reliability.md).
  let ready = await prepare().then(
    () => true,
    (err: unknown) => {
      log.warn(
        { err: String(err), engine: engine.name },
        "the search engine cannot be prepared; serving 503 and retrying",
      );
      return false;
    },
  );
  let wake: (() => void) | undefined;
  const prepared = (async () => {
    for (let attempt = 1; !ready && !stopped; attempt++) {
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, Math.min(500 * 2 ** attempt, 15_000)).unref();
      });
      if (stopped) return;
      try {
        await prepare();
        ready = true;
        log.info({ engine: engine.name, attempt }, "the search engine answers; knowledge serves");
      } catch (err) {
        log.warn({ err: String(err), attempt }, "the search engine still cannot be prepared; retrying");
      }
    }
  })();

  const indexed = (async () => {
    await prepared;
    if (stopped) return;
    if (startup.restored) {
      await engine.checkpoint?.(); // only when the docs pages changed
      log.info({ engine: engine.name }, "knowledge index restored from disk; the forum was not re-read");
      return;
    }
    for (let attempt = 1; !stopped; attempt++) {
      try {
        let n = 0;
        for await (const page of allPosts(forumClient)) {
          await engine.upsert(page.map((post) => postDocument(post, statusOf(post.id, post.status))));
          n += page.length;
          startup.rebuiltPosts += page.length;
          // then the page's visible comments (docs/design/search-and-translation.md#comments-in-search)
          for await (const comments of commentsOf(forumClient, page))
            if (comments.length > 0) await engine.upsert(comments.map(commentDocument));
        }
        await engine.checkpoint?.();
        log.info({ posts: n, engine: engine.name }, "knowledge index rebuilt");
        return;
      } catch (err) {
        log.warn({ err: String(err), attempt }, "re-indexing the forum's posts failed; retrying");
        await new Promise((r) => setTimeout(r, Math.min(500 * attempt, 5_000)));
      }
    }
  })();

  const implementation = knowledgeHandlers(
    untilReady(engine, () => ready),
    log,
  );
  const grpc = await startGrpcServer(
    opts.listenAddr,
    [{ name: "aps.knowledge.v1.KnowledgeService", definition: knowledge.KnowledgeServiceService, implementation }],
    log,
    {
      callers: deps.trust?.callers,
      ...deps.grpc,
      // NOT_SERVING until the engine is prepared (the gateway reports search down, its routes 503)
      probe: async () => {
        if (!ready) throw new Error("the search engine is not prepared yet");
      },
    },
  );
  log.info({ engine: engine.name }, "knowledge service started");
  return {
    port: grpc.port,
    engine,
    local: grpc.local(knowledge.KnowledgeServiceDefinition, implementation),
    indexed,
    startup,
    stop: async () => {
      stopped = true;
      wake?.();
      await prepared;
      await sub?.stop();
      await grpc.shutdown();
      await indexed.catch(() => undefined);
      forumClient.close();
      await engine.close();
    },
  };
}

/**
 * What the gRPC handlers use of `engine` (its name, its search), the searches failing
 * `upstream_unavailable` (gRPC UNAVAILABLE, 503 at the gateway) until `ready()` holds.
 */
function untilReady(engine: SearchEngine, ready: () => boolean): Pick<SearchEngine, "name" | "search"> {
  return {
    name: engine.name,
    search: (...args) => {
      if (!ready()) throw new ApsError("upstream_unavailable", "search is starting: its engine cannot be reached yet");
      return engine.search(...args);
    },
  };
}

/**
 * The texts of a page of results (docs/design/search-and-translation.md#resume-and-rebuild): the reference pages from memory (a fixed, small
 * set), posts and comments read from the forum by id, one `GetPosts` and one `GetComments` call per page.
 */
function textsOf(docs: KnowledgeDoc[], forumClient: ForumClient): TextSource {
  const pages = new Map(docs.map((d) => [d.id, d.body]));
  return async (ids) => {
    const out = new Map<string, string>();
    const posts: string[] = [];
    const comments: string[] = [];
    for (const id of ids) {
      const page = pages.get(id);
      if (page !== undefined) out.set(id, page);
      else if (id.startsWith("p_")) posts.push(id);
      else if (id.startsWith("c_")) comments.push(id);
    }
    const [p, c] = await Promise.all([
      posts.length > 0 ? forumClient.getPosts({ ids: posts }) : { items: [] },
      comments.length > 0 ? forumClient.getComments({ ids: comments }) : { items: [] },
    ]);
    for (const item of [...p.items, ...c.items]) out.set(item.id, item.body);
    return out;
  };
}

/**
 * The knowledge service as every launcher runs it (docs/design/services.md#one-service-contract): its bus (NATS_URL, else the
 * context's, else a private in-process one), its engine from the config (engineFromConfig) — in
 * PostgreSQL when wantsDatabase and a database is at hand: KNOWLEDGE_DATABASE_URL, or the
 * all-in-one's (docs/design/search-and-translation.md#the-postgresql-engine; a knowledge run on its own never falls back to DATABASE_URL: the
 * chart's has none) —, and its options. `stop` also closes the bus connection and the database it opened.
 */
export const knowledgeService: ApsGrpcService<"knowledge", KnowledgeConfig> = {
  name: "knowledge",
  loadConfig,
  // a schema only for the PostgreSQL engine (KNOWLEDGE_DATABASE_URL, or DATABASE_URL with KNOWLEDGE_ENGINE=postgres)
  migrate: async ({ cfg, log }) => {
    if (cfg.indexDatabaseUrl && wantsDatabase(cfg))
      await migrateSchema("knowledge", { ...cfg, databaseUrl: cfg.indexDatabaseUrl }, log, [MIGRATIONS_DIR]);
    else
      log.info(
        "the search engine keeps no schema here (Meilisearch, or no KNOWLEDGE_DATABASE_URL): nothing to migrate",
      );
  },
  start: async (ctx) => {
    const { cfg, log } = ctx;
    const bus = await openEventBus("knowledge", cfg, log, ctx.bus);
    const url = cfg.indexDatabaseUrl ?? ctx.databaseUrl;
    let db: Database | undefined;
    const closeOwn = [
      async () => {
        if (bus !== ctx.bus) await bus.close();
      },
      () => db?.close(),
    ];
    try {
      if (url && wantsDatabase(cfg))
        db = await openDatabase({ url, schema: "knowledge", log, ...databaseOptionsOf(cfg), ...ctx.pool });
      const svc = await startKnowledge(
        {
          bus,
          log,
          trust: internalTrustOf("knowledge", cfg),
          grpc: grpcServerTuningOf(cfg),
          callDeadlineMs: cfg.GRPC_DEADLINE_MS,
        },
        {
          listenAddr: ctx.listenAddr ?? cfg.KNOWLEDGE_LISTEN_ADDR,
          forumAddr: ctx.targets.forum,
          engine: engineFromConfig(cfg, db && { db, log }),
          docsDir: cfg.KNOWLEDGE_DOCS_DIR,
        },
      );
      return { ...svc, stop: () => stopInOrder([() => svc.stop(), ...closeOwn]) };
    } catch (err) {
      await stopInOrder(closeOwn).catch(() => undefined);
      throw err;
    }
  },
};
