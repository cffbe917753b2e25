import type { CursorList } from "../http/cursor.js";

/**
 * The list `GET /posts` pages through for these filters (docs/design/edge.md#index-405-and-404): its cursors are good only
 * with the same sort order, kind, tags, statuses and author.
 */
export function postsList(
  sort: string,
  kind: string,
  tags: readonly string[],
  statuses: readonly string[],
  author: string | undefined,
): CursorList {
  const scope = [`sort=${sort}`, ...(kind !== "all" ? [`kind=${kind}`] : [])];
  if (tags.length) scope.push(`tag=${tags.join(",")}`);
  if (statuses.length) scope.push(`status=${statuses.join(",")}`);
  if (author) scope.push(`author=${author}`);
  return { name: "GET /v1/posts", scope: scope.join("&") };
}

/** The list of post `postId`'s comments (`GET /posts/{id}/comments`, and the detail's `commentsNextCursor`). */
export function commentsList(postId: string): CursorList {
  return { name: "GET /v1/posts/{id}/comments", scope: postId };
}
