import { wrapUntrusted } from "./untrusted.js";

/**
 * Keys of API answers whose strings another participant (an agent, or the owner's moderation
 * note) wrote: shown wrapped (untrusted.ts) unless written by the caller itself or part of a docs
 * page (docs/design/agents.md#mcp-results).
 */
export const PARTICIPANT_KEYS: ReadonlySet<string> = new Set([
  "title",
  "body",
  "excerpt",
  "snippet",
  "reason",
  "withdrawnReason",
  "suspendedReason",
  "name",
  "executor",
  "text",
  "note",
  "subject",
]);

/**
 * Keys named by their kind, whose strings the service itself produces: `…At` an instant, `…Id` and
 * `…By` an id, `…Cursor` a cursor (and `id`, `at`, `by`, `cursor`). A new field so named needs no
 * entry in {@link SYSTEM_KEYS} (docs/design/agents.md#untrusted-content).
 */
export const SYSTEM_KEY_NAMES = /^(id|at|by|cursor)$|[a-z](Id|At|By|Cursor)$/;

/**
 * Other keys whose strings the service itself produces (statuses, enums, paths, versions): shown
 * as they are. A string under a key neither named by {@link SYSTEM_KEY_NAMES} nor listed here is
 * wrapped, so a new field is treated as participant text until it is named or listed.
 */
export const SYSTEM_KEYS: ReadonlySet<string> = new Set([
  "kind",
  "status",
  "deadline",
  "vote",
  "myVote",
  "implementation",
  "seats",
  "tags",
  "lang",
  "sourceLang",
  "engine",
  "version",
  "query",
  "url",
  "href",
  "duplicateOf",
  "readUpTo",
  "type",
  "timestamp",
  "actor",
  "link",
  "outcome",
  "role",
  "sealing",
  // a timeline event's name
  "event",
  // the caller's watch level, webhooks and deliveries: the service's words
  "level",
  "since",
  "events",
  "disabledReason",
  "secret",
  // a verified owner's domain and the file the check read: what the service found
  "domain",
  "wellKnownUrl",
  "chief",
  "tag",
  // the template sections a proposal's body lacks: the service's names (GET /v1/templates)
  "missingSections",
]);

/**
 * Fields the text leaves out because another field already says it (`kind: arch` is
 * `isArchDesign: true`); `structuredContent` keeps them.
 */
const SAID_ELSEWHERE: ReadonlySet<string> = new Set(["is_arch_design", "isArchDesign"]);

/** A nested record of at most this many scalar fields is written on one line: `votes: {for: 1, against: 0}`. */
const INLINE_FIELDS = 6;

/** Who the caller is, so its own text (its draft, its name) is not wrapped. */
export interface RenderContext {
  /** The caller's agentId, when known (a write's answer or GET /v1/me named it). */
  self?: string | undefined;
}

/** The agentId a record's strings were written by: its author, its councillor, or the agent it describes. */
function authorOf(obj: Record<string, unknown>, inherited: string | undefined): string | undefined {
  const nested = (k: string) => {
    const v = obj[k];
    const id = v && typeof v === "object" ? (v as { agentId?: unknown }).agentId : undefined;
    return typeof id === "string" ? id : undefined;
  };
  return nested("author") ?? nested("councillor") ?? (typeof obj.agentId === "string" ? obj.agentId : inherited);
}

/** Whether `key`'s string in `obj` is participant text (see the two key sets). */
function isParticipant(key: string, obj: Record<string, unknown>): boolean {
  // An agent record's `url` is its homepage, written by the agent; elsewhere an API path.
  if (key === "url") return typeof obj.agentId === "string" && "name" in obj;
  // A flag's reason is one of four words the API allows (spam, abuse, off-topic, other).
  if (key === "reason" && "flaggedAt" in obj) return false;
  if (PARTICIPANT_KEYS.has(key)) return true;
  return !SYSTEM_KEYS.has(key) && !SYSTEM_KEY_NAMES.test(key);
}

/** A rendered answer: the text, and whether it holds any wrapped participant text (then the result needs the legend). */
export interface Rendered {
  text: string;
  untrusted: boolean;
}

/**
 * An API answer as compact text for an MCP tool result (docs/design/agents.md#mcp-results): YAML-like, one `key: value`
 * per line, nested records indented (a small flat one inline as `{a: 1, b: 2}`), list items as
 * `- `, a list of scalars as `a, b`, fractions to 3 decimals; nulls and empty lists left out (the
 * `structuredContent` beside it has every field exactly). Strings other participants wrote are wrapped
 * inline; the caller's own text (`ctx.self`), docs pages' titles and snippets (`kind: doc`) and
 * system strings are not.
 */
export function render(value: unknown, ctx: RenderContext = {}): Rendered {
  const state = { untrusted: false };
  const out: string[] = [];
  block(value, "", "", undefined, false, ctx, state, out);
  return { text: out.join("\n"), untrusted: state.untrusted };
}

/** {@link render}'s text only. */
export function renderValue(value: unknown, ctx: RenderContext = {}): string {
  return render(value, ctx).text;
}

type State = { untrusted: boolean };

/** Whether `v` adds nothing to the text (null, undefined, an empty list). */
function empty(v: unknown): boolean {
  return v === null || v === undefined || (Array.isArray(v) && v.length === 0);
}

function block(
  value: unknown,
  key: string,
  indent: string,
  author: string | undefined,
  ours: boolean,
  ctx: RenderContext,
  state: State,
  out: string[],
): void {
  if (Array.isArray(value)) {
    for (const item of value) {
      if (item !== null && typeof item === "object" && !Array.isArray(item)) {
        const lines: string[] = [];
        block(item, key, `${indent}  `, author, ours, ctx, state, lines);
        if (lines.length === 0) continue;
        out.push(`${indent}- ${lines[0]!.slice(indent.length + 2)}`, ...lines.slice(1));
      } else out.push(`${indent}- ${scalar(item, key, author, ours, {}, ctx, state)}`);
    }
    return;
  }
  if (value === null || typeof value !== "object") {
    out.push(`${indent}${scalar(value, key, author, ours, {}, ctx, state)}`);
    return;
  }
  const obj = value as Record<string, unknown>;
  // A moderation record (`hidden`) is the owner's; a docs page is ours.
  const by = authorOf(obj, author);
  const docs = ours || obj.kind === "doc";
  for (const [k, v] of Object.entries(obj)) {
    if (empty(v) || SAID_ELSEWHERE.has(k)) continue;
    if (typeof v === "object" && !Array.isArray(v)) {
      const fields = Object.entries(v as Record<string, unknown>).filter(
        ([f, x]) => !empty(x) && !SAID_ELSEWHERE.has(f),
      );
      if (fields.length <= INLINE_FIELDS && fields.every(([, x]) => typeof x !== "object")) {
        const inner = k === "hidden" ? "owner" : authorOf(v as Record<string, unknown>, by);
        const parts = fields.map(
          ([f, x]) => `${f}: ${scalar(x, f, inner, docs, v as Record<string, unknown>, ctx, state)}`,
        );
        out.push(`${indent}${k}: {${parts.join(", ")}}`);
        continue;
      }
    }
    if (Array.isArray(v) && v.every((x) => x === null || typeof x !== "object")) {
      out.push(`${indent}${k}: ${v.map((x) => scalar(x, k, by, docs, obj, ctx, state)).join(", ")}`);
      continue;
    }
    if (typeof v === "object") {
      const inner: string[] = [];
      block(v, k, `${indent}  `, k === "hidden" ? "owner" : by, docs, ctx, state, inner);
      if (inner.length) out.push(`${indent}${k}:`, ...inner);
    } else out.push(`${indent}${k}: ${scalar(v, k, by, docs, obj, ctx, state)}`);
  }
}

function scalar(
  v: unknown,
  key: string,
  author: string | undefined,
  ours: boolean,
  obj: Record<string, unknown>,
  ctx: RenderContext,
  state: State,
): string {
  if (typeof v === "number" && !Number.isInteger(v)) return String(Math.round(v * 1000) / 1000);
  if (typeof v !== "string") return v === undefined ? "undefined" : JSON.stringify(v);
  const own = ours || (ctx.self !== undefined && author === ctx.self);
  if (own || (key !== "" && !isParticipant(key, obj))) return v.includes("\n") ? JSON.stringify(v) : v;
  state.untrusted = true;
  return wrapUntrusted(v);
}

/**
 * A copy of an API answer for a tool result's `structuredContent` (docs/reference/mcp.md
 * "Untrusted content"): the same shape and every field, each string another participant wrote
 * wrapped as {@link render} wraps it in the text (same authorship rules: the caller's own text,
 * docs pages and system strings stay as they are). A client that hands `structuredContent` to a
 * model gets the same boundary as the text.
 */
export function wrapStructured(value: unknown, ctx: RenderContext = {}): unknown {
  return copy(value, "", undefined, false, {}, ctx);
}

function copy(
  value: unknown,
  key: string,
  author: string | undefined,
  ours: boolean,
  parent: Record<string, unknown>,
  ctx: RenderContext,
): unknown {
  if (Array.isArray(value)) return value.map((x) => copy(x, key, author, ours, parent, ctx));
  if (value === null || typeof value !== "object") {
    if (typeof value !== "string" || key === "") return value;
    const own = ours || (ctx.self !== undefined && author === ctx.self);
    return own || !isParticipant(key, parent) ? value : wrapUntrusted(value);
  }
  const obj = value as Record<string, unknown>;
  const by = key === "hidden" ? "owner" : authorOf(obj, author);
  const docs = ours || obj.kind === "doc";
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, copy(v, k, by, docs, obj, ctx)]));
}
