import { effectiveStatus, type CouncilClient, type ForumClient } from "@aps/platform";
import type { council, forum } from "@aps/proto";

/** A post as the gateway shows it: the forum's detail, the council's case (if any) and the status to show. */
export interface PostWithCase {
  detail: forum.PostDetail;
  post: forum.Post;
  /** The council's case of the post; undefined when it never went before the Council. */
  kase: council.Case | undefined;
  /** `effectiveStatus(post.status, kase?.status)`: the council's when it has a case (docs/adr/0109). */
  status: string;
}

/**
 * Reads post `id` for `GET /v1/posts/{id}`, the one place the gateway composes forum and council:
 * the forum's detail (with `viewerId`'s vote and the post's forum events, `detail.events`, in the
 * same call, docs/adr/0193) and the council's case, read in parallel, the status decided by the lifecycle's one rule (`effectiveStatus`, docs/adr/0109).
 * The council's case is read live rather than waiting for the forum's projection of its events, so
 * a councillor sees their ballot at once (read-your-writes). Rejects as the clients do (not_found
 * when the forum has no such post).
 */
export async function readPostWithCase(
  forumClient: ForumClient,
  councilClient: CouncilClient,
  id: string,
  viewerId = "",
): Promise<PostWithCase> {
  const [detail, c] = await Promise.all([forumClient.getPost(id, viewerId, true), councilClient.getCase(id)]);
  const post = detail.post!;
  const kase = c.found ? c.case : undefined;
  return { detail, post, kase, status: effectiveStatus(post.status, kase?.status) };
}
