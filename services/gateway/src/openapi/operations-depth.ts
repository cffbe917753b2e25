import { z } from "zod";
import * as rq from "./requests-depth.js";
import * as rs from "./responses.js";
import type { Operation } from "./operation.js";

const commentParams = z.object({
  id: z.string().meta({ description: "c_ + ULID (anything else is 404)", example: "c_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" }),
});
const postParams = z.object({
  id: z.string().meta({ description: "p_ + ULID (anything else is 404)", example: "p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" }),
});
const CODES = [
  "unauthenticated",
  "forbidden",
  "idempotency_in_progress",
  "idempotency_mismatch",
  "not_found",
  "invalid_state",
] as const;

/**
 * The Council's depth operations (docs/reference/moderation-and-council-depth.md, docs/adr/0130):
 * duplicates, concerns, implementation progress. Each answers the case after the write.
 */
export const DEPTH_OPERATIONS: Operation[] = [
  {
    method: "post",
    path: "/posts/{id}/duplicate",
    operationId: "markDuplicate",
    tag: "council",
    summary: "Mark a post a duplicate of `of`; its open case closes (councillor)",
    access: "key",
    idempotent: true,
    params: postParams,
    body: { schema: rq.duplicateBody },
    ok: { status: 200, description: "the case after the write", schema: rs.Case },
    codes: [...CODES],
  },
  {
    method: "post",
    path: "/posts/{id}/concerns",
    operationId: "raiseConcern",
    tag: "council",
    summary: "Raise a blocking concern: no adoption while one is open (councillor)",
    access: "key",
    idempotent: true,
    params: postParams,
    body: { schema: rq.concernBody },
    ok: { status: 201, description: "the case after the write", schema: rs.Case },
    codes: [...CODES],
  },
  {
    method: "post",
    path: "/posts/{id}/concerns/{cid}/resolve",
    operationId: "resolveConcern",
    tag: "council",
    summary: "Resolve a concern (who raised it, or the chief)",
    access: "key",
    idempotent: true,
    params: rq.concernParams,
    body: { schema: rq.resolveBody },
    ok: { status: 200, description: "the case after the write", schema: rs.Case },
    codes: [...CODES],
  },
  {
    method: "post",
    path: "/posts/{id}/progress",
    operationId: "reportProgress",
    tag: "council",
    summary: "Report implementation progress, 0–100, never decreasing (ext_ executor or chief)",
    access: "key",
    idempotent: true,
    params: postParams,
    body: { schema: rq.progressBody },
    ok: { status: 201, description: "the case after the write", schema: rs.Case },
    codes: [...CODES],
  },
  {
    method: "post",
    path: "/posts/{id}/flags",
    operationId: "flagPost",
    tag: "posts",
    summary: "Flag a post once (spam, abuse, off-topic, other); enough flaggers hide it",
    access: "key",
    idempotent: true,
    params: postParams,
    body: { schema: rq.flagBody },
    ok: { status: 201, description: "the flag", schema: rs.Flag },
    codes: [...CODES, "quota_exceeded"],
  },
  {
    method: "post",
    path: "/comments/{id}/flags",
    operationId: "flagComment",
    tag: "posts",
    summary: "Flag a comment once (as a post's flag)",
    access: "key",
    params: commentParams,
    body: { schema: rq.flagBody },
    ok: { status: 201, description: "the flag", schema: rs.Flag },
    codes: ["unauthenticated", "forbidden", "not_found", "invalid_state", "quota_exceeded"],
  },
];
