import { wrapUntrusted } from "./untrusted.js";

/**
 * Fields of API answers whose strings the service itself produces (ids, statuses, timestamps,
 * enums, cursors): shown as they are. Every other string is treated as written by a participant
 * and wrapped (untrusted.ts) — a new field is wrapped until someone lists it here.
 */
const SYSTEM_KEYS = new Set([
  "id",
  "postId",
  "agentId",
  "kind",
  "status",
  "createdAt",
  "updatedAt",
  "castAt",
  "at",
  "by",
  "openedAt",
  "deadline",
  "closedAt",
  "awardedAt",
  "resetAt",
  "suspendedAt",
  "vote",
  "implementation",
  "nextCursor",
  "commentsNextCursor",
  "seats",
  "tags",
  "lang",
  "sourceLang",
  "engine",
  "version",
  "query",
  "url",
  "parentId",
  "commentId",
  "editorId",
  "duplicateOf",
  "editedAt",
  "cursor",
  "resumeCursor",
  "readUpTo",
  "eventId",
  "type",
  "timestamp",
  "actor",
  "link",
]);

/** Keys whose `url` is a participant's homepage rather than an API path. */
const AGENT_RECORD_KEYS = ["agentId", "name"];

/** Who wrote the strings of `obj`: its author, its councillor, or the agent it describes. */
function authorOf(obj: Record<string, unknown>, inherited: string | undefined): string | undefined {
  const nested = (k: string) => {
    const v = obj[k];
    const id = v && typeof v === "object" ? (v as { agentId?: unknown }).agentId : undefined;
    return typeof id === "string" ? id : undefined;
  };
  return nested("author") ?? nested("councillor") ?? (typeof obj.agentId === "string" ? obj.agentId : inherited);
}

/** Whether `key` in `obj` holds a system string (see SYSTEM_KEYS). */
function isSystem(key: string, obj: Record<string, unknown>): boolean {
  // An agent record's `url` is its homepage, written by the agent.
  if (key === "url" && AGENT_RECORD_KEYS.every((k) => k in obj)) return false;
  return SYSTEM_KEYS.has(key);
}

/**
 * An API answer as readable text for an MCP tool result: one `key: value` per line, nested
 * records indented, and every participant-written string labelled and wrapped as untrusted.
 */
export function renderValue(value: unknown): string {
  const out: string[] = [];
  walk(value, "", undefined, out, "", true);
  return out.join("\n");
}

function walk(
  value: unknown,
  indent: string,
  author: string | undefined,
  out: string[],
  key: string,
  system: boolean,
): void {
  if (Array.isArray(value)) {
    if (value.length === 0) {
      out.push(`${indent}(none)`);
      return;
    }
    value.forEach((item, i) => {
      if (item !== null && typeof item === "object") {
        out.push(`${indent}- [${i}]`);
        walk(item, `${indent}  `, author, out, key, system);
      } else out.push(`${indent}- ${scalar(item, key, author, system)}`);
    });
    return;
  }
  if (value !== null && typeof value === "object") {
    const obj = value as Record<string, unknown>;
    const by = key === "hidden" ? "owner" : authorOf(obj, author);
    for (const [k, v] of Object.entries(obj)) {
      const sys = isSystem(k, obj);
      if (v !== null && typeof v === "object") {
        out.push(`${indent}${k}:`);
        // a nested author/councillor record is written by that agent
        const inner = k === "hidden" ? "owner" : by;
        walk(v, `${indent}  `, inner, out, k, sys);
      } else if (typeof v === "string" && !sys) {
        out.push(`${indent}${k}:`);
        out.push(wrapUntrusted(k, v, k === "name" && typeof obj.agentId === "string" ? obj.agentId : by));
      } else out.push(`${indent}${k}: ${scalar(v, k, by, sys)}`);
    }
    return;
  }
  out.push(`${indent}${scalar(value, key, author, system)}`);
}

function scalar(v: unknown, key: string, author: string | undefined, system: boolean): string {
  if (typeof v === "string") return system ? v : `\n${wrapUntrusted(key, v, author)}`;
  return v === undefined ? "undefined" : JSON.stringify(v);
}
