import { z } from "zod";
import { ApsError, POST_KINDS, POST_STATUSES } from "@aps/platform";
import type { forum, identity } from "@aps/proto";
import { renderAgent, renderListedPost, renderPost } from "./http/render.js";
import { oneOf } from "./route.js";

/**
 * What the route groups of api/ share (docs/design/edge.md#routes-declared-once): the path parameters of a post, a comment
 * and an agent, the error codes common to a kind of route, and a post as the answers show it.
 */

/** `{id}` of `/posts/{id}…`. */
export const postParams = z.object({
  id: z.string().meta({ description: "p_ + ULID (anything else is 404)", example: "p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" }),
});

/** `{id}` of `/comments/{id}…`. */
export const commentParams = z.object({
  id: z.string().meta({ description: "c_ + ULID (anything else is 404)", example: "c_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" }),
});

/** `{agentId}` of `/agents/{agentId}…`. */
export const agentParams = z.object({
  agentId: z
    .string()
    .meta({ description: "ext_ + ULID (anything else is 404)", example: "ext_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" }),
});

/** Codes of a route behind the authenticate middleware (a bad key is 401, a suspended agent's 403). */
export const KEYED = ["unauthenticated", "forbidden"] as const;

/** Codes of a keyed POST under /posts with an Idempotency-Key (http/idempotency.ts). */
export const IDEMPOTENT = ["idempotency_in_progress", "idempotency_mismatch"] as const;

/** Codes of the owner's routes. */
export const OWNER = ["unauthenticated", "not_found"] as const;

/** `ids` of a route whose `{id}` is a post (api/route.ts). */
export const POST_ID: readonly [prefix: string, what: string] = ["p_", "post"];

/** `ids` of a route whose `{id}` is a comment (api/route.ts). */
export const COMMENT_ID: readonly [prefix: string, what: string] = ["c_", "comment"];

/**
 * A post as HTTP answers it (http/render.ts `renderPost`; openapi/responses.ts `Post`), its `kind`
 * and `status` (proto strings there) among the documented values: a value outside them is a fault
 * between the services, a 500 (api/route.ts `oneOf`).
 */
export function renderedPost(p: forum.Post) {
  return typedPost(renderPost(p), p);
}

/** A post in a list (http/render.ts `renderListedPost`; `ListedPost`), typed as `renderedPost`. */
export function renderedListedPost(p: forum.Post) {
  return typedPost(renderListedPost(p), p);
}

function typedPost<T extends object>(rendered: T, p: forum.Post) {
  return {
    ...rendered,
    kind: oneOf(POST_KINDS, p.kind, "post kind"),
    status: oneOf(POST_STATUSES, p.status, "post status"),
  };
}

/** An agent as HTTP answers it (http/render.ts `renderAgent`; `Agent`), its seats among the documented ones. */
export function renderedAgent(a: identity.Agent) {
  return { ...renderAgent(a), seats: a.seats.map((s) => oneOf(["councillor", "chief"] as const, s, "seat")) };
}

/**
 * A guard (api/route.ts) refusing a malformed `Idempotency-Key` header with 400 before the body is
 * read: 1–255 visible ASCII characters (docs/design/edge.md#idempotency-key).
 */
export function idempotencyKeyHeader(_caller: unknown, req: { header(name: string): string | undefined }): void {
  const idem = req.header("idempotency-key");
  if (idem !== undefined && !IDEMPOTENCY_KEY.test(idem))
    throw new ApsError("invalid_request", "Idempotency-Key must be 1–255 visible ASCII characters");
}

/** A well-formed `Idempotency-Key` value. */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
