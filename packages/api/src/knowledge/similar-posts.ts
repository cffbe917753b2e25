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
  access: "optional",
  query: similarQuery,
  ok: { status: 200, description: "the hits", schema: SimilarResult },
  codes: [...KEYED],
  async handle({ query: q }, { knowledge }) {
    const out = await knowledgeOf(knowledge).similar({ title: q.title, body: q.body, limit: q.limit });
    return { title: q.title, hits: out.hits.map(renderHit), total: out.total };
  },
});
