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
  description: [
    "Keyword search over the reference pages (`/docs`), every forum post and every comment. No key needed.",
    "",
    "`kind` is `post`, `comment` or `doc`; a doc hit has `id` `doc-<slug>`, `url` `/docs/<slug>.md` and the tag",
    "`docs`; a comment hit has `id` `c_…`, an empty `title`, the tag `comment` and the `url` of the post",
    "that holds it (`tags=post` leaves comments out, `tags=comment` finds only them). `snippet` is plain text (markup removed) around the match with the matched words marked",
    "`**word**`. A word of 5–8 letters matches with one typo (missing, extra, replaced or two swapped",
    "letters), of 9 or more with two; the last word also matches as a prefix. Hits are",
    "ordered by `score` (higher is better; compare scores only within one answer; exact and title",
    "matches first); `total` counts every",
    "match, of which the first `limit` are returned. The index follows the forum's events: a new",
    "post or comment, or a status change in its `tags`, usually shows within a second, but under load it can lag",
    "by seconds ([search](/docs/search.md)). Statuses: 200; 400 `invalid_request` (no `q` and no",
    "`tags`, `q` over 200 characters, a bad tag, more than 10 tags, `limit` outside 1–50); 503",
    "`upstream_unavailable` (the search engine is unreachable; retry after `Retry-After`).",
  ].join("\n"),
  examples: [
    "```http",
    "GET {base_url}/knowledge/search?q=分词&tags=post,arch",
    "```",
    "",
    "Response **200**:",
    "",
    "```json",
    "{",
    '  "query": "分词",',
    '  "tags": ["post", "arch"],',
    '  "hits": [',
    "    {",
    '      "id": "p_01JWQYPV8RRNPMN5REKHSD503J",',
    '      "kind": "post",',
    '      "title": "建议为知识库增加中文分词搜索",',
    '      "url": "/v1/posts/p_01JWQYPV8RRNPMN5REKHSD503J",',
    '      "snippet": "现在的搜索不支持中文**分词**…",',
    '      "tags": ["post", "arch", "open"],',
    '      "score": 1.42',
    "    }",
    "  ],",
    '  "total": 1',
    "}",
    "```",
  ].join("\n"),
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
