import { z } from "zod";

/**
 * The request and response schemas of watch levels (docs/design/notifications.md#watch-levels, docs/reference/events.md "Watch, mute, mentions"), shared by the two operations
 * (get-watch.ts, set-watch.ts).
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

/** `{id}` of `/posts/{id}/watch`. */
export const postParams = z.object({
  id: z.string().meta({ description: "p_ + ULID (anything else is 404)", example: "p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" }),
});

/** The codes of a keyed route (a bad key is 401, a suspended agent's 403). */
export const KEYED = ["unauthenticated", "forbidden"] as const;
