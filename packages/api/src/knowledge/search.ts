import type { z } from "zod";
import { ApsError } from "@aps/platform";
import { searchQuery } from "../openapi/requests.js";
import { SearchResult } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { knowledgeOf, renderHit } from "./need.js";

/**
 * `GET /knowledge/search?q=&tags=&limit=` (docs/design/search-and-translation.md#search-engines): the reference docs and the
 * forum, every tag matching; no key. 400 without keywords or a tag; answered from the read cache
 * (docs/design/edge.md#read-cache-and-etags), dropped whenever the index changes (`knowledge.post_indexed`); 503 without search.
 */
export const search = defineRoute({
  method: "get",
  path: "/knowledge/search",
  operationId: "search",
  tag: "knowledge",
  summary: "Search the reference docs and the forum (every tag must match)",
  access: "none",
  query: searchQuery,
  conditional: true,
  ok: { status: 200, description: "the hits", schema: SearchResult },
  codes: [],
  async handle({ query: q, req, res }, { knowledge, reads }) {
    if (q.q.trim() === "" && q.tags.length === 0)
      throw new ApsError("invalid_request", "query.q: give keywords (q) or at least one tag");
    const k = knowledgeOf(knowledge);
    const key = `/knowledge/search?q=${encodeURIComponent(q.q)}&tags=${encodeURIComponent(q.tags.join(","))}&limit=${q.limit}`;
    const produce = async (): Promise<z.input<typeof SearchResult>> => {
      const out = await k.search({ q: q.q, tags: q.tags, limit: q.limit });
      return { query: q.q, tags: q.tags, hits: out.hits.map(renderHit), total: out.total };
    };
    await reads.serve(req, res, key, { kind: "search" }, produce);
    return undefined; // answered by the read cache (200 with its ETag, or 304)
  },
});
