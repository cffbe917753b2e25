import { z } from "zod";
import { parseRequest, searchDuration, unary, zeroSeries, type Logger } from "@aps/platform";
import type { knowledge } from "@aps/proto";
import type { SearchEngine, SearchResult } from "../engine.js";
import { SIMILAR_MIN_SCORE, similarQuery } from "../similar.js";

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
 * The knowledge service's gRPC handlers over `engine` (docs/design/search-and-translation.md#search-engines): `Search` (words
 * and tags, 1–50 hits) and `Similar` (posts like a draft, docs/design/search-and-translation.md#duplicate-check: the draft's significant
 * words, any of them matching, scores below SIMILAR_MIN_SCORE dropped). Bad requests are
 * INVALID_ARGUMENT; each engine call's latency goes to `aps_search_duration_seconds`.
 */
export function knowledgeHandlers(engine: Pick<SearchEngine, "name" | "search">, log: Logger) {
  zeroSeries(searchDuration, { engine: [engine.name], kind: ["search", "similar"], outcome: ["ok", "error"] });
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
  return {
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
}
