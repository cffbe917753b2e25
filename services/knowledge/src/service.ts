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
  type InternalTrust,
} from "@aps/platform";
import { knowledge, type forum } from "@aps/proto";
import { EmbeddedEngine, type SearchEngine, type SearchResult } from "./engine.js";
import { MeiliEngine } from "./meili.js";
import { SIMILAR_MIN_SCORE, similarQuery } from "./similar.js";
import { allPosts, docsDocuments, postDocument } from "./sources.js";

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
  /** Resolves when the start-up re-index of the forum's posts has finished. */
  indexed: Promise<void>;
  stop(): Promise<void>;
}

/** The engine the config asks for: Meilisearch when `MEILISEARCH_URL` is set, else embedded. */
export function engineFromConfig(cfg: {
  MEILISEARCH_URL?: string | undefined;
  MEILISEARCH_API_KEY?: string | undefined;
  MEILISEARCH_INDEX?: string;
}): SearchEngine {
  return cfg.MEILISEARCH_URL
    ? new MeiliEngine({
        url: cfg.MEILISEARCH_URL,
        apiKey: cfg.MEILISEARCH_API_KEY,
        index: cfg.MEILISEARCH_INDEX ?? "aps-knowledge",
      })
    : new EmbeddedEngine();
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
  deps: { bus: EventBus; log: Logger; trust?: InternalTrust | undefined },
  opts: KnowledgeOptions,
): Promise<KnowledgeHandle> {
  const { bus, log } = deps;
  const engine = opts.engine ?? new EmbeddedEngine();
  await engine.init();
  await engine.upsert(docsDocuments(opts.docsDir));
  const forumClient = new ForumClient(opts.forumAddr, deps.trust?.caller);
  /** Highest status seen per post (events may arrive before the forum's own projection). */
  const statuses = new Map<string, string>();
  const statusOf = (id: string, s: string) => {
    const known = statuses.get(id);
    const best = known !== undefined && !movesForward(known, s) ? known : s;
    statuses.set(id, best);
    return best;
  };
  /** The last indexed form of each post: a status event re-tags it without a forum round trip. */
  const known = new Map<string, forum.Post>();
  const indexPost = async (postId: string, status?: string) => {
    if (status) statusOf(postId, status);
    let p = status ? known.get(postId) : undefined;
    if (!p) {
      p = (await forumClient.getPosts([postId])).items[0];
      if (!p) throw new Error(`post ${postId} not found in the forum yet`);
      known.set(p.id, p);
    }
    // A post the owner hid leaves the index, whatever event mentions it (docs/adr/0118).
    if (p.hiddenAt) await engine.remove([p.id]);
    else await engine.upsert([postDocument(p, statusOf(p.id, p.status))]);
    await announceIndexed(p.id);
  };
  /** `forum.post_moderated` about the post itself: drop it, or index it again as the forum has it. */
  const moderated = async (postId: string, commentId: string) => {
    if (commentId) return; // a comment's visibility does not change the post's document
    known.delete(postId);
    await indexPost(postId);
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
      "forum.post_created": (m) => indexPost(m.postId),
      "forum.post_on_agenda": (m) => indexPost(m.postId, "agenda"),
      "forum.post_moderated": (m) => moderated(m.postId, m.commentId),
      // An edit changes title, body and tags: read the post again (docs/reference/editing.md).
      "forum.post_edited": (m) => moderated(m.postId, ""),
      "forum.post_withdrawn": (m) => indexPost(m.postId, "withdrawn"),
      "council.case_opened": (m) => indexPost(m.postId, m.status),
      "council.case_closed": (m) => indexPost(m.postId, m.outcome),
      "council.handoff_recorded": (m) => indexPost(m.postId, "implementing"),
      "council.implementation_completed": (m) => indexPost(m.postId, "completed"),
    },
  });

  let stopped = false;
  const indexed = (async () => {
    for (let attempt = 1; !stopped; attempt++) {
      try {
        let n = 0;
        for await (const page of allPosts(forumClient)) {
          for (const post of page) known.set(post.id, post);
          await engine.upsert(page.map((post) => postDocument(post, statusOf(post.id, post.status))));
          n += page.length;
        }
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
    { callers: deps.trust?.callers },
  );
  log.info({ engine: engine.name }, "knowledge service started");
  return {
    port: grpc.port,
    engine,
    local: grpc.local(knowledge.KnowledgeServiceDefinition, implementation),
    indexed,
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
