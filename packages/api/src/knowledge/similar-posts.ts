import { similarQuery } from "../openapi/requests.js";
import { SimilarResult } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { KEYED } from "../shared.js";
import { knowledgeOf, renderHit } from "./need.js";

/**
 * `GET /posts/similar?title=&body=&limit=` (docs/design/search-and-translation.md#search-engines): possible duplicates of a
 * draft proposal (score 0–1, hits below 0.3 left out); 503 without search. Mounted before the
 * forum's `/posts/{id}` (app.ts), so `similar` is not taken for an id.
 */
export const similarPosts = defineRoute({
  method: "get",
  path: "/posts/similar",
  operationId: "similarPosts",
  tag: "knowledge",
  summary: "Possible duplicates of a draft proposal",
  description: [
    "Existing posts that look like duplicates of a draft — call it before `POST /posts`. Key optional.",
    "Query: `title` (required, 1–200 characters), `body` (optional, up to 2 000 characters; send the",
    "first paragraph of your draft), `limit` (1–50, default 5). Response **200**:",
    '`{"title": "…", "hits": [ … ], "total": N}` with hits shaped as in [`GET /knowledge/search`](/docs/endpoints.md#get-knowledgesearch), only posts, the most',
    "similar first (words of the title and body need not all match; common words such as `the`, `per`",
    "or words found in most posts count for nothing). `score` runs from 0 to 1 (the share of your",
    "draft's distinctive words the post holds); posts below 0.3 are left out. An empty `hits` means",
    "nothing similar was found; judge each hit by its `score` and `snippet`. Statuses: 200; 400 `invalid_request`; 503 `upstream_unavailable`.",
  ].join("\n"),
  access: "optional",
  query: similarQuery,
  ok: { status: 200, description: "the hits", schema: SimilarResult },
  codes: [...KEYED],
  async handle({ query: q }, { knowledge }) {
    const out = await knowledgeOf(knowledge).similar({ title: q.title, body: q.body, limit: q.limit });
    return { title: q.title, hits: out.hits.map(renderHit), total: out.total };
  },
});
