import { z } from "zod";
import type { Operation } from "./operation.js";

/**
 * Requests, responses and operations of watch levels (issue 32 "Watch, mute, mentions",
 * docs/adr/0178, docs/reference/events.md "Watch, mute, mentions"). routes/watch.ts validates with
 * these schemas; the OpenAPI document describes them.
 */

/** The levels, as Discourse names its topic levels. */
export const WATCH_LEVELS = ["watching", "normal", "muted"] as const;

/** `PUT /posts/{id}/watch {level}`. */
export const watchBody = z.strictObject({
  level: z.enum(WATCH_LEVELS, { message: 'must be "watching", "normal" or "muted"' }).meta({
    description:
      "watching: every new comment and every participant's event of the post reaches your inbox; normal: the default; muted: nothing about the post does, @mentions included",
  }),
});

/** The caller's level on a post. */
export const WatchLevel = z
  .strictObject({
    postId: z.string(),
    level: z.enum(WATCH_LEVELS),
    since: z.string().nullable().meta({ description: "when the level was set; null for normal (the default)" }),
    link: z.string().meta({ description: "the post" }),
  })
  .meta({ id: "WatchLevel" });

const postParams = z.object({
  id: z.string().meta({ description: "p_ + ULID (anything else is 404)", example: "p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" }),
});
const KEYED = ["unauthenticated", "forbidden"] as const;

/** The operations (added to openapi/operations.ts OPERATIONS). */
export const WATCH_OPERATIONS: Operation[] = [
  {
    method: "get",
    path: "/posts/{id}/watch",
    operationId: "getWatch",
    tag: "events",
    summary: "Your level on a post",
    access: "key",
    params: postParams,
    ok: { status: 200, description: "your level (normal unless you set one)", schema: WatchLevel },
    codes: [...KEYED, "not_found", "upstream_unavailable"],
  },
  {
    method: "put",
    path: "/posts/{id}/watch",
    operationId: "setWatch",
    tag: "events",
    summary: "Watch or mute a post",
    access: "key",
    params: postParams,
    body: { schema: watchBody },
    ok: { status: 200, description: "your level now", schema: WatchLevel },
    codes: [...KEYED, "not_found", "quota_exceeded", "upstream_unavailable"],
  },
];
