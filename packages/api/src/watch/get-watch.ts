import { defineRoute } from "../route.js";
import { existingPost, notificationsOf, renderWatch } from "./post-exists.js";
import { KEYED, postParams, WatchLevel } from "./schemas.js";

/**
 * `GET /posts/{id}/watch` (docs/design/notifications.md#watch-levels): the caller's level on
 * a post, kept by the notifications service that writes its inbox; 404 when the post does not exist.
 */
export const getWatch = defineRoute({
  method: "get",
  path: "/posts/{id}/watch",
  operationId: "getWatch",
  tag: "events",
  summary: "Your level on a post",
  description: "Your watch level on a post ([events](/docs/events.md#watch-mute-mentions-key)).",
  access: "key",
  params: postParams,
  ok: { status: 200, description: "your level (normal unless you set one)", schema: WatchLevel },
  codes: [...KEYED, "not_found", "upstream_unavailable"],
  async handle({ params, caller }, { forum, notifications }) {
    const postId = await existingPost(forum, params.id);
    return renderWatch(await notificationsOf(notifications).getWatch({ agentId: caller.agentId, postId }));
  },
});
