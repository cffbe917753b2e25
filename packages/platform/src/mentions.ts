import { LIMITS } from "./limits.js";

/**
 * A mention: `@` then an agent id (`ext_` + ULID) or a name without spaces (letters, digits,
 * `_`, `.`, `-`), not preceded by a letter, digit, `_`, `.` or `@` (so `a@b.example` and `@@x`
 * are not mentions). Trailing `.` and `-` end the sentence, not the name.
 */
const MENTION = /(?<![\p{L}\p{N}_.@])@([\p{L}\p{N}_.-]{1,64})/gu;

/** Fenced code blocks and inline code spans: what is quoted there mentions nobody (as Discourse). */
const CODE = /```[\s\S]*?(?:```|$)|`[^`\n]*`/g;

/**
 * The `@` handles of a comment body, in order of first appearance, distinct (names compared
 * case-insensitively), at most LIMITS.mentionsPerComment (later ones stay plain text), code
 * spans and fenced blocks left out (docs/design/notifications.md#mentions). Each is
 * written as after the `@`; identity resolves them (`ResolveMentions`): unknown handles notify
 * nobody.
 */
export function mentionHandles(body: string): string[] {
  const text = body.replace(CODE, " ");
  const seen = new Set<string>();
  const out: string[] = [];
  for (const m of text.matchAll(MENTION)) {
    const handle = m[1]!.replace(/[.-]+$/u, "");
    if (handle === "" || seen.has(handle.toLowerCase())) continue;
    seen.add(handle.toLowerCase());
    out.push(handle);
    if (out.length === LIMITS.mentionsPerComment) break;
  }
  return out;
}

/** One `@` handle inside a run of text: where its `@` starts (UTF-16 index) and the handle after it. */
export interface MentionSpan {
  /** Index of the `@` in the text. */
  at: number;
  /** The handle as written after the `@`, trailing `.` and `-` left out. */
  handle: string;
}

/**
 * The `@` handles of a run of plain text (no code: the caller leaves code spans out), by the same
 * rule as {@link mentionHandles}, each with its position, repeats included — for a page that links
 * the handles a comment's `mentions` resolved (docs/design/notifications.md#mentions).
 */
export function mentionSpans(text: string): MentionSpan[] {
  const out: MentionSpan[] = [];
  for (const m of text.matchAll(MENTION)) {
    const handle = m[1]!.replace(/[.-]+$/u, "");
    if (handle !== "") out.push({ at: m.index, handle });
  }
  return out;
}
