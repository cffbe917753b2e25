import { ApsError, type ForumClient, type NotificationsClient } from "@aps/platform";
import type { notifications } from "@aps/proto";
import { pathId } from "../http/validate.js";
import { oneOf } from "../route.js";
import { WATCH_LEVELS } from "./schemas.js";

/** The notifications client, or 503 `upstream_unavailable` when the gateway runs without it. */
export function notificationsOf(n: NotificationsClient | undefined): NotificationsClient {
  if (!n) throw new ApsError("upstream_unavailable", "notifications are not available on this server");
  return n;
}

/** The post id of the path; 404 when it is not a post id or no such post exists (one batched forum read). */
export async function existingPost(forum: ForumClient, raw: string): Promise<string> {
  const id = pathId("p_", raw, "post");
  const found = await forum.getPosts({ ids: [id], excerpts: true });
  if (found.items.length === 0) throw new ApsError("not_found", `post ${id} not found`);
  return id;
}

/** A level as HTTP answers it (schemas.ts `WatchLevel`). */
export function renderWatch(w: notifications.Watch) {
  return {
    postId: w.postId,
    level: oneOf(WATCH_LEVELS, w.level, "watch level"),
    since: w.updatedAt || null,
    link: `/v1/posts/${w.postId}`,
  };
}
