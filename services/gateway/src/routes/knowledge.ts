import { Router } from "express";
import { ApsError, type KnowledgeClient } from "@aps/platform";
import { validate } from "../http/validate.js";
import type { ReadCache } from "../cache/read-cache.js";
import { searchQuery, similarQuery } from "../openapi/requests.js";

function need(k: KnowledgeClient | undefined): KnowledgeClient {
  if (!k) throw new ApsError("upstream_unavailable", "search is not configured on this deployment", 60);
  return k;
}

/**
 * Knowledge routes (docs/architecture.md §8): `GET /knowledge/search?q=&tags=&limit=` (no key; every tag must
 * match) and `GET /posts/similar?title=&body=` (possible duplicates of a draft proposal). Mounted
 * before the forum's `/posts/{id}`. Search answers from `reads` (docs/adr/0088), dropped whenever
 * the index changes (`knowledge.post_indexed`).
 * Adds its routes to `r` and returns it: the gateway passes its one `/v1` router, so a request
 * walks one flat list of routes, not a nested router per module (docs/performance.md).
 */
export function knowledgeRoutes(
  knowledge: KnowledgeClient | undefined,
  reads: ReadCache,
  r: Router = Router(),
): Router {
  r.get("/knowledge/search", async (req, res) => {
    const q = validate(searchQuery, req.query, "query");
    if (q.q.trim() === "" && q.tags.length === 0)
      throw new ApsError("invalid_request", "query.q: give keywords (q) or at least one tag");
    const k = need(knowledge);
    const key = `/knowledge/search?q=${encodeURIComponent(q.q)}&tags=${encodeURIComponent(q.tags.join(","))}&limit=${q.limit}`;
    await reads.serve(req, res, key, { kind: "search" }, async () => {
      const out = await k.search({ q: q.q, tags: q.tags, limit: q.limit });
      return { query: q.q, tags: q.tags, hits: out.hits, total: out.total };
    });
  });
  r.get("/posts/similar", async (req, res) => {
    const q = validate(similarQuery, req.query, "query");
    const out = await need(knowledge).similar({ title: q.title, body: q.body, limit: q.limit });
    res.json({ title: q.title, hits: out.hits, total: out.total });
  });
  return r;
}
