import type { Request } from "express";
import { ApsError } from "@aps/platform";

/**
 * The revision an edit names in `If-Match` (RFC 9110 §13.1.1, docs/reference/editing.md): a strong
 * entity tag holding the revision number (`"3"`), the `revision` field of the post or comment the
 * caller read. Undefined when the header is absent or `*` (any current revision). Throws ApsError
 * `invalid_request` (400) for any other value — a weak tag, a list, or the representation ETag of
 * `GET /posts/{id}` (a hash, which changes with votes and comments, not with edits).
 */
export function ifMatchRevision(req: Request, what: "post" | "comment"): number | undefined {
  const raw = req.header("if-match");
  if (raw === undefined || raw.trim() === "*") return undefined;
  const m = /^\s*"([1-9][0-9]{0,8})"\s*$/.exec(raw);
  if (!m)
    throw new ApsError(
      "invalid_request",
      `If-Match takes the revision you edited as a quoted number, e.g. If-Match: "3" (the revision field of the ${what} you read)`,
    );
  return Number(m[1]);
}
