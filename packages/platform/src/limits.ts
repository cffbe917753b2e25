import { z } from "zod";

/**
 * Field limits of the public contract (docs/design/edge.md#request-path "Validation"), shared by the gateway (first
 * line of defence) and the owning services (which re-check: they trust no caller).
 * Lengths count Unicode code points, not UTF-16 units, so an emoji counts as one character.
 */
export const LIMITS = {
  titleChars: 200,
  postBodyChars: 40_000,
  commentChars: 10_000,
  nameChars: 64,
  urlChars: 2_048,
  reasonChars: 10_000,
  /** Code points of the reason a public vote may carry (docs/design/votes-and-heat.md#vote-reasons). */
  voteReasonChars: 1_000,
  executorChars: 200,
  jsonBodyBytes: 64 * 1024,
  listDefault: 25,
  listMax: 100,
  /** Code points of a post body shown in lists (docs/design/edge.md#lists-and-cursors); the full body is on /posts/{id}. */
  excerptChars: 500,
  /** Code points of a comment carried as `excerpt` by its events and inbox items (docs/reference/events.md). */
  eventExcerptChars: 280,
  /** Distinct `@` mentions of one comment that notify; later ones are plain text (docs/design/notifications.md#mentions). */
  mentionsPerComment: 10,
  /**
   * Largest gRPC message any APS client or server sends or accepts, bytes (docs/design/edge.md#lists-and-cursors), set
   * explicitly on both sides instead of grpc-js's 4 MiB receive default. The largest legitimate
   * message is a GetPosts/ListPosts answer with 100 full bodies: ≈ 6.6 MB behind the gateway's
   * 64 KiB JSON cap, ≈ 16.1 MB at the services' own maximum (40 000 code points × 4 bytes + title
   * 800 + ≈ 300 of fields, × 100); twice that leaves room for growth.
   */
  grpcMessageBytes: 32 * 1024 * 1024,
} as const;

/** Most votes in one CastVotes call (docs/design/votes-and-heat.md#gateway-batching); the forum refuses a larger batch as `invalid_request`. */
export const CAST_VOTES_MAX = 64;

/** The first `max` code points of `s` (a surrogate pair is never split). */
export function firstCodePoints(s: string, max: number): string {
  if (s.length <= max) return s;
  let n = 0;
  let end = 0;
  for (const ch of s) {
    if (n === max) break;
    n++;
    end += ch.length;
  }
  return s.slice(0, end);
}

/** Number of Unicode code points in `s`. */
export function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** U+0000 (a PostgreSQL `text` cannot hold it) or an unpaired UTF-16 surrogate (UTF-8 cannot encode it). */
const UNSTORABLE = /[\u0000\p{Cs}]/u;

/** True when PostgreSQL can store `s` exactly as sent (no U+0000, no unpaired surrogate). */
export function isStorable(s: string): boolean {
  return !UNSTORABLE.test(s);
}

/**
 * A zod string of `min`..`max` code points that is not only whitespace when `min` > 0 and that
 * PostgreSQL stores exactly as sent (no U+0000, no unpaired surrogate: docs/design/edge.md#request-path "Text is
 * stored exactly as sent").
 */
export function text(min: number, max: number) {
  return z
    .string()
    .refine(isStorable, { message: "must not contain U+0000 or an unpaired surrogate" })
    .refine((s) => codePoints(s) >= min && (min === 0 || s.trim().length > 0), {
      message: `must be at least ${min} character(s) and not blank`,
    })
    .refine((s) => codePoints(s) <= max, { message: `must be at most ${max} characters` });
}
