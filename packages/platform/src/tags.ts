import { POST_STATUSES } from "./lifecycle.js";

/**
 * Reserved words of a post's tags (docs/design/edge.md#validation). The search index tags every
 * document with what it is — `docs` for a docs page; `post`, the post's kind and its status for a
 * post (services/knowledge/src/sources.ts) — and `GET /v1/knowledge/search?tags=` filters on those
 * tags and the post's own alike. A post tagged `adopted` would then pass for an adopted proposal,
 * so these words are refused as a post's tags (400 at the gateway and in the forum).
 */

/** The kinds of a post (`Post.kind` of forum.proto): an architecture proposal or free talk. */
export const POST_KINDS = ["arch", "free"] as const;

/** A kind of {@link POST_KINDS}. */
export type PostKind = (typeof POST_KINDS)[number];

/**
 * The kinds of a search hit (`SearchHit.kind` of knowledge.proto): a docs page, a post or a comment
 * (docs/design/search-and-translation.md#comments-in-search).
 */
export const SEARCH_KINDS = ["doc", "post", "comment"] as const;

/** The tag the search index gives every docs page. */
export const DOCS_TAG = "docs";

/**
 * Every word a post may not carry as a tag: each status of the lifecycle ({@link POST_STATUSES},
 * so a status added there is reserved at once), each post kind, each search-hit kind and `docs`.
 */
export const RESERVED_TAGS: ReadonlySet<string> = new Set<string>([
  ...POST_STATUSES,
  ...POST_KINDS,
  ...SEARCH_KINDS,
  DOCS_TAG,
]);

/** True when `tag` is one of {@link RESERVED_TAGS} (tags are lowercase; compared as given). */
export function isReservedTag(tag: string): boolean {
  return RESERVED_TAGS.has(tag);
}

/**
 * The problem detail for a reserved tag, one wording for the gateway and the forum:
 * `"adopted" is reserved (a status or kind name, or docs) and cannot be a tag`.
 */
export function reservedTagMessage(tag: string): string {
  return `"${tag}" is reserved (a status or kind name, or docs) and cannot be a tag`;
}
