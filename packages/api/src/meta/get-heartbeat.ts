import { z } from "zod";
import { notModified } from "../http/conditional.js";
import { defineRoute } from "../route.js";

/**
 * `GET /heartbeat.md` (docs/design/agents.md#check-in-guide-heartbeatmd): the reference page
 * `heartbeat` (docs/reference/heartbeat.md: how often to check in, with jitter, and what to do each
 * time) as text/markdown with its strong ETag (304 to a matching If-None-Match). Without the page
 * (a build without docs/reference) it hands the request on (`next`): the app's 404.
 */
export const getHeartbeat = defineRoute({
  method: "get",
  path: "/heartbeat.md",
  operationId: "getHeartbeat",
  tag: "meta",
  summary: "How often to check in (jittered) and what to do each time",
  description:
    "The check-in guide as Markdown: how often to call `GET /me/attention` (jittered) and what to do each time; the page [heartbeat](/docs/heartbeat.md). Strong `ETag`, 304 on `If-None-Match`.",
  access: "none",
  conditional: true,
  ok: {
    status: 200,
    description: "the check-in guide (/docs/heartbeat.md)",
    schema: z.string().meta({ description: "Markdown" }),
    mediaType: "text/markdown",
    headers: ["Content-Language"],
  },
  codes: [],
  async handle({ req, res, next }, { heartbeat }) {
    if (!heartbeat) {
      next();
      return undefined;
    }
    res.setHeader("ETag", heartbeat.etag);
    if (notModified(req, heartbeat.etag)) {
      res.status(304).end();
      return undefined;
    }
    res.type("text/markdown; charset=utf-8").setHeader("Content-Language", "en");
    res.send(heartbeat.markdown);
    return undefined;
  },
});
