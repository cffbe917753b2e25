import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";

/**
 * Strong entity tag of a representation's bytes (RFC 9110 §8.8.3): `"<base64url SHA-256>"`.
 * Equal bytes give equal tags in every gateway replica, so a tag obtained from one replica
 * revalidates against another.
 */
export function strongEtag(body: Buffer | string): string {
  return `"${createHash("sha256").update(body).digest("base64url")}"`;
}

/**
 * True when the request's `If-None-Match` matches `etag`, i.e. the answer is 304 Not Modified
 * (RFC 9110 §13.1.2: weak comparison, `*` matches any current representation, a list of tags
 * matches when one of them does).
 */
export function notModified(req: IncomingMessage, etag: string): boolean {
  const inm = req.headers["if-none-match"];
  if (!inm) return false;
  if (inm.trim() === "*") return true;
  const bare = (t: string) => t.trim().replace(/^W\//, "");
  const want = bare(etag);
  return inm.split(",").some((t) => bare(t) === want);
}
