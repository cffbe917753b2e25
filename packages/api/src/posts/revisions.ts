import { ApsError } from "@aps/platform";
import { issueCursor, openCursor, type CursorList } from "../http/cursor.js";

/** The list of revisions of post or comment `id` (docs/design/edge.md#index-405-and-404: its cursors are good only there). */
function revisionsList(id: string): CursorList {
  return { name: id.startsWith("c_") ? "GET /v1/comments/{id}/revisions" : "GET /v1/posts/{id}/revisions", scope: id };
}

/** The opaque cursor of a revisions page of `id`: the last revision number seen, bound to its list. */
export function revisionCursor(id: string, after: number): string | null {
  return after > 0 ? issueCursor(revisionsList(id), String(after)) : null;
}

/** The revision number a cursor of `revisionCursor` for `id` carries; `invalid_cursor` for anything else. */
export function afterOf(id: string, cursor: string | undefined): number {
  const inner = openCursor(revisionsList(id), cursor);
  if (inner === "") return 0;
  if (!/^[1-9][0-9]{0,8}$/.test(inner))
    throw new ApsError("invalid_cursor", "cursor: not a cursor returned by this list");
  return Number(inner);
}
