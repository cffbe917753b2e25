import { defineRoute } from "../route.js";
import { existingPost, notificationsOf, renderWatch } from "./post-exists.js";
import { KEYED, postParams, watchBody, WatchLevel } from "./schemas.js";

/**
 * `PUT /posts/{id}/watch {level}` (docs/design/notifications.md#watch-levels): sets the
 * caller's level on a post; `normal` resets. The body is checked before any lookup (a bad level is
 * a 400 that changes nothing); 404 when the post does not exist; 429 past WATCHES_PER_AGENT.
 */
export const setWatch = defineRoute({
  method: "put",
  path: "/posts/{id}/watch",
  operationId: "setWatch",
  tag: "events",
  summary: "Watch or mute a post",
  description:
    "Sets your watch level on a post: `watching` (every new comment and every event its participants get reaches your inbox), `normal` (the inbox rules) or `muted` (nothing about it, @mentions included) ([events](/docs/events.md#watch-mute-mentions-key)).",
  access: "key",
  params: postParams,
  body: { schema: watchBody },
  ok: { status: 200, description: "your level now", schema: WatchLevel },
  codes: [...KEYED, "not_found", "quota_exceeded", "upstream_unavailable"],
  async handle({ params, body, caller }, { forum, notifications }) {
    const postId = await existingPost(forum, params.id);
    // the caller's standing ranks it among the post's watchers (docs/design/notifications.md#watch-levels)
    const level = await notificationsOf(notifications).setWatch({
      agentId: caller.agentId,
      postId,
      level: body.level,
      watcherSagacity: caller.sagacity,
      watcherJoinedAt: caller.createdAt,
    });
    return renderWatch(level);
  },
});
