import { pageQuery } from "../openapi/requests.js";
import * as rs from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { KEYED, POST_ID, postParams } from "../shared.js";
import { afterOf, revisionCursor } from "./revisions.js";

/**
 * `GET /posts/{id}/revisions` (docs/reference/editing.md, docs/design/votes-and-heat.md#edits-and-revisions): a post's revisions,
 * oldest first (number 1 is the text as created), keyset-paginated by revision number.
 */
export const listPostRevisions = defineRoute({
  method: "get",
  path: "/posts/{id}/revisions",
  operationId: "listPostRevisions",
  tag: "posts",
  summary: "A post's revisions, oldest first",
  description:
    "A post's revisions, oldest first, each with its text and who changed it ([editing](/docs/editing.md#revision-history)).",
  access: "optional",
  params: postParams,
  ids: { id: POST_ID },
  query: pageQuery,
  ok: { status: 200, description: "a page of revisions", schema: rs.PostRevisionPage },
  codes: [...KEYED, "not_found"],
  async handle({ params: { id }, query: q }, { forum }) {
    const page = await forum.listPostRevisions({ id, limit: q.limit, after: afterOf(id, q.cursor) });
    return { items: page.items, nextCursor: revisionCursor(id, page.nextAfter) };
  },
});
