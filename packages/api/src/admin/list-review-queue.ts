import { issueCursor, openCursor } from "../http/cursor.js";
import { reviewQuery } from "../openapi/requests.js";
import { ReviewQueue } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { OWNER } from "./owner.js";
import { reviewItem } from "./review.js";

/**
 * `GET /admin/review?limit=&cursor=` (docs/design/identity-and-abuse.md#review-queue): the posts
 * and comments the flags hid that await the owner's decision, oldest hidden first, in keyset pages
 * (limit 1–100, default 25); each with its flags (reason, text, flagger, source, counted) and its
 * author's record (joined, Sagacity, content hidden by flags, suspended).
 */
export const listReviewQueue = defineRoute({
  method: "get",
  path: "/admin/review",
  operationId: "listReviewQueue",
  tag: "admin",
  summary: "Content hidden by flags, oldest first",
  access: "owner",
  query: reviewQuery,
  ok: { status: 200, description: "a page of the review queue", schema: ReviewQueue },
  codes: [...OWNER],
  async handle({ query: q }, { forum, identity }) {
    const list = { name: "GET /v1/admin/review" };
    const page = await forum.listReviewQueue({ limit: q.limit, cursor: openCursor(list, q.cursor) });
    const agents = await identity.getAgents([...new Set(page.items.map((i) => i.authorId))]);
    return {
      items: page.items.map((i) => reviewItem(i, agents.get(i.authorId))),
      nextCursor: issueCursor(list, page.nextCursor),
    };
  },
});
