import type { ForumClient } from "@aps/platform";
import type { council, forum } from "@aps/proto";

/** A post as the gateway shows it: the forum's detail, the forum's projection of its case (if any) and the status to show. */
export interface PostWithCase {
  detail: forum.PostDetail;
  post: forum.Post;
  /** The forum's projection of the post's Council case (docs/design/council.md#the-forums-projection-of-the-case); undefined when it never went before the Council. */
  kase: council.Case | undefined;
  /** The effective status, as the forum computed it from the post and the projected case (docs/design/council.md). */
  status: string;
}

/**
 * Reads post `id` for `GET /v1/posts/{id}` in ONE forum call (docs/design/council.md#the-forums-projection-of-the-case): the post with
 * `viewerId`'s vote, its first comments, its forum events (`detail.events`) and the forum's
 * projection of its Council case (`detail.case`), the status already the effective one
 * (`effectiveStatus`, computed in the forum only). A councillor still sees their ballot at once:
 * the council's write routes answer only when that projection has reached the write
 * (`awaitCaseProjection`, read-your-writes). Rejects as the client does (not_found when the forum
 * has no such post).
 */
export async function readPostWithCase(forumClient: ForumClient, id: string, viewerId = ""): Promise<PostWithCase> {
  const detail = await forumClient.getPost({ id, viewerId, withEvents: true });
  const post = detail.post!;
  return { detail, post, kase: detail.case, status: post.status };
}
