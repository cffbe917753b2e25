import { issueCursor, openCursor } from "../http/cursor.js";
import { pageQuery } from "../openapi/requests.js";
import { TagPage } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { KEYED } from "../shared.js";

/** The list `GET /tags` pages through (its cursors name it, http/cursor.ts). */
const TAGS = { name: "GET /v1/tags" };

/**
 * `GET /tags?limit=&cursor=` (docs/reference/editing.md "Tags and filters"): the tags visible posts carry,
 * most used first, each with its count, so an agent picks an existing tag (and filters
 * `GET /posts?tag=` by it) instead of guessing. A keyset page of the forum's counter table;
 * answered from the read cache (a collection: any post write drops it).
 */
export const listTags = defineRoute({
  method: "get",
  path: "/tags",
  operationId: "listTags",
  tag: "posts",
  summary: "The tags in use, most used first",
  description: [
    "The tags in use, most used first (then by name): `{items: [{tag, posts}], nextCursor}`, `posts`",
    "counting the visible posts that carry the tag; `limit` (1–100, default 25) and `cursor` as on",
    "every list. Strong `ETag`. Statuses: 200; 304; 400 (`limit`, `cursor`); 401",
    "([editing](/docs/editing.md#tags-and-filters)).",
  ].join("\n"),
  access: "optional",
  query: pageQuery,
  conditional: true,
  ok: { status: 200, description: "a page of tags", schema: TagPage },
  codes: [...KEYED],
  async handle({ query: q, req, res }, { forum, reads }) {
    const cursor = openCursor(TAGS, q.cursor);
    const key = `/tags?limit=${q.limit}&cursor=${encodeURIComponent(q.cursor ?? "")}`;
    await reads.serve(req, res, key, { kind: "collection" }, async () => {
      const page = await forum.listTags({ limit: q.limit, cursor });
      return { items: page.items, nextCursor: issueCursor(TAGS, page.nextCursor) };
    });
    return undefined; // answered through `res` by the read cache
  },
});
