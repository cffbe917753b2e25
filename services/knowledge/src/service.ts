import { z } from "zod";
import {
  consumeEvents,
  encodeEvent,
  movesForward,
  ForumClient,
  parseRequest,
  searchDuration,
  startGrpcServer,
  subjectOf,
  traceHeaders,
  unary,
  type EventBus,
  type LocalEndpoint,
  type Logger,
  type ServiceTarget,
  type Subscription,
  type GrpcServerTuning,
  type InternalTrust,
  type Database,
} from "@aps/platform";
import { knowledge, type forum } from "@aps/proto";
import { EmbeddedEngine, type KnowledgeDoc, type SearchEngine, type SearchResult, type TextSource } from "./engine.js";
import { MeiliEngine } from "./meili.js";
import { SIMILAR_MIN_SCORE, similarQuery } from "./similar.js";
import { allPosts, docsDocuments, postDocument } from "./sources.js";
import { PostgresEngine } from "./store/postgres-engine.js";

/** What `startKnowledge` needs. */
export interface KnowledgeOptions {
  listenAddr: string;
  /** The forum: its gRPC address (`FORUM_GRPC_ADDR`), or in the all-in-one its in-process endpoint (docs/adr/0085). */
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
  /** The service in-process, for the clients of the all-in-one (docs/adr/0085-local-transport-in-the-all-in-one.md). */
  local: LocalEndpoint<typeof knowledge.KnowledgeServiceDefinition>;
  /** Resolves when the index is complete: at once after a restore, else when the re-index of the forum's posts has finished. */
  indexed: Promise<void>;
  /**
   * How the index started (docs/adr/0132): `restored` from its snapshot + log (the forum was not
   * read), else rebuilt; `rebuiltPosts` counts the posts read from the forum for it (0 after a restore).
   */
  startup: { restored: boolean; rebuiltPosts: number };
  stop(): Promise<void>;
}

/**
 * The engine the config asks for: Meilisearch when `MEILISEARCH_URL` is set; else PostgreSQL's
 * full-text index in `store.db` when given (docs/adr/0142: the all-in-one's database, or
 * `KNOWLEDGE_DATABASE_URL`); else the MiniSearch engine — durable under `KNOWLEDGE_INDEX_DIR` when
 * that is set (docs/adr/0132), in memory otherwise.
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
 * Whether the knowledge service should open a database for its index (docs/adr/0142): no
 * Meilisearch and no MiniSearch folder chosen. The all-in-one then passes its own database.
 */
export function wantsDatabase(cfg: {
  MEILISEARCH_URL?: string | undefined;
  KNOWLEDGE_INDEX_DIR?: string | undefined;
}): boolean {
  return !cfg.MEILISEARCH_URL && !cfg.KNOWLEDGE_INDEX_DIR;
}

const tag = z.string().regex(/^[\p{L}\p{N}_-]{1,40}$/u, "a tag is 1–40 letters, digits, - or _");
const searchReq = z.object({
  q: z.string().max(200),
  tags: z.array(tag).max(10),
  limit: z.number().int().min(1).max(50),
});
const similarReq = z.object({
  title: z.string().min(1).max(200),
  body: z.string().max(40_000),
  limit: z.number().int().min(1).max(50),
});

/**
 * Starts the knowledge service (docs/architecture.md §8): indexes the reference pages, serves gRPC (+ health)
 * on `opts.listenAddr`, keeps posts current from `forum.post_created`, `forum.post_on_agenda`,
 * `forum.post_moderated` (a hidden post leaves the index, docs/adr/0118), `forum.post_edited`
 * (the new text and tags), `forum.post_withdrawn` and
 * the council's status events (the post is read from the forum by id; each change announced as
 * `knowledge.post_indexed` for the gateways' search caches), and re-indexes every post
 * of the forum in the background (retrying until the forum answers).
 */
export async function startKnowledge(
  deps: { bus: EventBus; log: Logger; trust?: InternalTrust | undefined; grpc?: GrpcServerTuning | undefined },
  opts: KnowledgeOptions,
): Promise<KnowledgeHandle> {
  const { bus, log } = deps;
  const engine = opts.engine ?? new EmbeddedEngine();
  const forumClient = new ForumClient(opts.forumAddr, deps.trust?.caller);
  const docs = docsDocuments(opts.docsDir);
  engine.useTexts?.(textsOf(docs, forumClient));
  await engine.init();
  const restored = engine.restored === true;
  if (restored) {
    // pages of an older version that are gone from the manifest leave the index
    const fresh = new Set(docs.map((d) => d.id));
    const listed = await engine.search("", ["docs"], 1_000);
    await engine.remove(listed.hits.map((h) => h.id).filter((id) => !fresh.has(id)));
  }
  await engine.upsert(docs);
  /** Highest status seen per post (events may arrive before the forum's own projection). */
  const statuses = new Map<string, string>();
  const statusOf = (id: string, s: string) => {
    const known = statuses.get(id);
    const best = known !== undefined && !movesForward(known, s) ? known : s;
    statuses.set(id, best);
    return best;
  };
  /** Reads the post from the forum (the index keeps no body) and indexes it, or drops it when hidden; logged with `eventId`. */
  const indexPost = async (eventId: string, postId: string, status?: string) => {
    if (status) statusOf(postId, status);
    const p = (await forumClient.getPosts([postId])).items[0];
    if (!p) throw new Error(`post ${postId} not found in the forum yet`);
    // A post the owner hid leaves the index, whatever event mentions it (docs/adr/0118).
    if (p.hiddenAt) await engine.remove([p.id], eventId);
    else await engine.upsert([postDocument(p, statusOf(p.id, p.status))], eventId);
    await announceIndexed(p.id);
  };
  /** `forum.post_moderated` about the post itself: drop it, or index it again as the forum has it. */
  const moderated = async (eventId: string, postId: string, commentId: string) => {
    if (commentId) return; // a comment's visibility does not change the post's document
    await indexPost(eventId, postId);
  };
  /**
   * Publishes `knowledge.post_indexed` (best effort, straight to the bus: the index holds no
   * outbox): gateways drop their cached search results on it (docs/adr/0088). A failed publish
   * is logged, not retried — the gateways' cache TTL bounds what it costs.
   */
  const announceIndexed = async (postId: string) => {
    const { eventId, payload } = encodeEvent("knowledge.post_indexed", { postId });
    await bus
      .publish({
        subject: subjectOf(bus, "knowledge.post_indexed"),
        eventId,
        payload,
        headers: { "aps-event-type": "knowledge.post_indexed", ...traceHeaders() },
      })
      .catch((err: unknown) => log.warn({ err: String(err), postId }, "could not announce an indexed post"));
  };

  const sub: Subscription = await consumeEvents(bus, {
    durable: "knowledge-index",
    maxDeliver: 10,
    handlers: {
      "forum.post_created": (m) => indexPost(m.eventId, m.postId),
      "forum.post_on_agenda": (m) => indexPost(m.eventId, m.postId, "agenda"),
      "forum.post_moderated": (m) => moderated(m.eventId, m.postId, m.commentId),
      "council.case_opened": (m) => indexPost(m.eventId, m.postId, m.status),
      "council.case_closed": (m) => indexPost(m.eventId, m.postId, m.outcome),
      "council.handoff_recorded": (m) => indexPost(m.eventId, m.postId, "implementing"),
      "council.implementation_completed": (m) => indexPost(m.eventId, m.postId, "completed"),
      "council.post_duplicated": (m) => indexPost(m.eventId, m.postId, "duplicate"), // docs/adr/0130
      // An edit changes title, body and tags: read the post again (docs/reference/editing.md).
      "forum.post_edited": (m) => moderated(m.eventId, m.postId, ""),
      "forum.post_withdrawn": (m) => indexPost(m.eventId, m.postId, "withdrawn"),
    },
  });

  let stopped = false;
  const startup = { restored, rebuiltPosts: 0 };
  const indexed = (async () => {
    if (restored) {
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

  const toProto = (r: SearchResult): knowledge.SearchResponse => ({ hits: r.hits, total: r.total });
  /** Runs one engine search and records its latency in `aps_search_duration_seconds`. */
  const timedSearch = async (kind: "search" | "similar", run: () => Promise<SearchResult>): Promise<SearchResult> => {
    const end = searchDuration.startTimer({ engine: engine.name, kind });
    try {
      const result = await run();
      end({ outcome: "ok" });
      return result;
    } catch (err) {
      end({ outcome: "error" });
      throw err;
    }
  };
  const implementation = {
    search: unary<knowledge.SearchRequest, knowledge.SearchResponse>(log, async (req) => {
      const r = parseRequest(searchReq, req);
      return toProto(await timedSearch("search", () => engine.search(r.q, r.tags, r.limit)));
    }),
    similar: unary<knowledge.SimilarRequest, knowledge.SearchResponse>(log, async (req) => {
      const r = parseRequest(similarReq, req);
      const q = similarQuery(r.title, r.body);
      if (q === "") return { hits: [], total: 0 }; // only stop-words: nothing to compare (an empty q would list every post)
      const opts = { match: "any", minScore: SIMILAR_MIN_SCORE } as const;
      return toProto(await timedSearch("similar", () => engine.search(q, ["post"], r.limit, opts)));
    }),
  };
  const grpc = await startGrpcServer(
    opts.listenAddr,
    [{ name: "aps.knowledge.v1.KnowledgeService", definition: knowledge.KnowledgeServiceService, implementation }],
    log,
    { callers: deps.trust?.callers, ...deps.grpc },
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
      await sub.stop();
      await grpc.shutdown();
      await indexed.catch(() => undefined);
      forumClient.close();
      await engine.close();
    },
  };
}

/**
 * The texts of a page of results (docs/adr/0132): the reference pages from memory (a fixed, small
 * set), posts read from the forum by id, one `GetPosts` call per page.
 */
function textsOf(docs: KnowledgeDoc[], forumClient: ForumClient): TextSource {
  const pages = new Map(docs.map((d) => [d.id, d.body]));
  return async (ids) => {
    const out = new Map<string, string>();
    const posts: string[] = [];
    for (const id of ids) {
      const page = pages.get(id);
      if (page !== undefined) out.set(id, page);
      else if (id.startsWith("p_")) posts.push(id);
    }
    if (posts.length > 0) for (const p of (await forumClient.getPosts(posts)).items) out.set(p.id, p.body);
    return out;
  };
}
