import { issueCursor, openCursor } from "../http/cursor.js";
import { authorVerifications, renderListedPost, withVerifiedAuthor } from "../http/render.js";
import { listQuery } from "../openapi/requests.js";
import * as rs from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { KEYED } from "../shared.js";
import { postsList } from "./lists.js";

/**
 * `GET /posts` (kind, sort, limit, cursor, tag, status, author; docs/design/edge.md#request-path defaults
 * kind=all, sort=hot, limit 25 ≤ 100): a page of posts with excerpts, answered from the read cache
 * (docs/design/edge.md#read-cache-and-etags) with a strong ETag. Filters (docs/reference/editing.md): every tag, any status,
 * one author; each uses an index. The authors' owner verification: one identity call per page.
 */
export const listPosts = defineRoute({
  method: "get",
  path: "/posts",
  operationId: "listPosts",
  tag: "posts",
  summary: "Posts, hot or new, with excerpts",
  access: "optional",
  query: listQuery,
  repeatable: ["tag", "status"],
  conditional: true,
  ok: { status: 200, description: "a page of posts", schema: rs.PostPage },
  codes: [...KEYED],
  async handle({ query: q, req, res }, { forum, identity, reads }) {
    const tags = [...new Set(q.tag)].sort();
    const statuses = [...new Set(q.status)].sort();
    const list = postsList(q.sort, q.kind, tags, statuses, q.author);
    const cursor = openCursor(list, q.cursor);
    const key = `/posts?kind=${q.kind}&sort=${q.sort}&limit=${q.limit}&cursor=${encodeURIComponent(q.cursor ?? "")}&tag=${tags.join(",")}&status=${statuses.join(",")}&author=${q.author ?? ""}`;
    await reads.serve(req, res, key, { kind: "collection" }, async () => {
      const page = await forum.listPosts({
        kind: q.kind,
        sort: q.sort,
        limit: q.limit,
        cursor,
        authorId: q.author ?? "",
        fullBodies: false,
        tags,
        statuses,
      });
      const items = page.items.map(renderListedPost);
      // The authors' owner verification (docs/design/notifications.md#verified-owners): one identity call per page.
      const verified = await authorVerifications(identity, items);
      return {
        items: items.map((i) => withVerifiedAuthor(i, verified)),
        nextCursor: issueCursor(list, page.nextCursor),
      };
    });
    return undefined; // answered through `res` by the read cache
  },
});
