import { ApsError } from "@aps/platform";

/**
 * A list a cursor belongs to: `name` as the API spells it (`GET /v1/posts/{id}/comments`) and
 * `scope`, what else makes it this list — the sort order, the filters, the post or agent it lists
 * (`sort=new&tag=a,b`, `p_01…`). Two lists with the same name and scope page through the same rows.
 */
export interface CursorList {
  name: string;
  scope?: string;
}

/** Version mark of the envelope, so another format can be told apart later. */
const MARK = "c1";

/** `list` as one line: its name, and its scope in parentheses when it has one. */
function described(list: CursorList): string {
  return list.scope ? `${list.name} (${list.scope})` : list.name;
}

/**
 * The cursor the API hands out for position `inner` of `list` (a service's own keyset cursor):
 * base64url of `["c1", name, scope, inner]`, so `openCursor` can tell whether a cursor came from
 * the list it is sent to (docs/design/edge.md#index-405-and-404). Null for no position (`""`, null,
 * undefined): the last page.
 */
export function issueCursor(list: CursorList, inner: string | null | undefined): string | null {
  if (!inner) return null;
  return Buffer.from(JSON.stringify([MARK, list.name, list.scope ?? "", inner])).toString("base64url");
}

/**
 * The service cursor inside `text` when `issueCursor` made it for `list` (same name and scope);
 * "" for no cursor (the first page). Throws 400 `invalid_cursor` naming `list` — and, when the
 * cursor came from another list, that list — for anything else: another list's cursor, another
 * sort order or filter of the same list, one made up, or one from before cursors were bound
 * (they lived minutes: pages are read in a row). A plain check, not a signature: forging a bound
 * cursor gets nothing the caller could not list anyway.
 */
export function openCursor(list: CursorList, text: string | undefined): string {
  if (text === undefined || text === "") return "";
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    v = undefined;
  }
  const t =
    Array.isArray(v) && v.length === 4 && v[0] === MARK && v.every((x) => typeof x === "string") && v[3] !== ""
      ? (v as [string, string, string, string])
      : undefined;
  if (t && t[1] === list.name && t[2] === (list.scope ?? "")) return t[3];
  const from = t ? `; it was issued by ${described({ name: t[1], scope: t[2] })}` : "";
  throw new ApsError(
    "invalid_cursor",
    `cursor: not issued by ${described(list)}${from}. Pass the nextCursor this list returned, or list again without cursor`,
  );
}
