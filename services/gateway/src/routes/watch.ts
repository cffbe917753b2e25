import { Router } from "express";
import { ApsError, type ForumClient, type NotificationsClient } from "@aps/platform";
import type { notifications } from "@aps/proto";
import { requireCaller } from "../http/auth.js";
import { pathId, validate } from "../http/validate.js";
import { watchBody } from "../openapi/watch.js";

/** A level as HTTP answers it (openapi/watch.ts `WatchLevel`). */
function renderWatch(w: notifications.Watch) {
  return { postId: w.postId, level: w.level, since: w.updatedAt || null, link: `/v1/posts/${w.postId}` };
}

/**
 * `GET|PUT /posts/{id}/watch` (issue 32 "Watch, mute, mentions", docs/adr/0178): the
 * caller's level on a post, kept by the notifications service that writes its inbox. The post must
 * exist (404 otherwise); a bad level is a 400 that changes nothing; `PUT normal` resets.
 */
export function watchRoutes(forum: ForumClient, n: NotificationsClient | undefined, r: Router = Router()): Router {
  const need = () => {
    if (!n) throw new ApsError("upstream_unavailable", "notifications are not available on this server");
    return n;
  };
  const existing = async (raw: string | undefined) => {
    const id = pathId("p_", raw, "post");
    const found = await forum.getPosts([id], true);
    if (found.items.length === 0) throw new ApsError("not_found", `post ${id} not found`);
    return id;
  };
  r.get("/posts/:id/watch", async (req, res) => {
    const me = requireCaller(res);
    const postId = await existing(req.params.id);
    res.json(renderWatch(await need().getWatch({ agentId: me.agentId, postId })));
  });
  r.put("/posts/:id/watch", async (req, res) => {
    const me = requireCaller(res);
    const postId = pathId("p_", req.params.id, "post");
    const b = validate(watchBody, req.body, "body"); // before any lookup: a bad level changes nothing
    await existing(postId);
    res.json(renderWatch(await need().setWatch({ agentId: me.agentId, postId, level: b.level })));
  });
  return r;
}
