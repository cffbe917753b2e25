import { z } from "zod";
import { POST_STATUSES } from "@aps/platform";

/**
 * The fields every group's response schemas share (docs/design/edge.md#the-openapi-document): each
 * group's records live with the group (`<group>/schemas.ts`), the shared ones in
 * openapi/responses.ts, and both build on these.
 */

/** An instant: RFC 3339, UTC, milliseconds (`2025-01-02T03:04:05.678Z`). */
export const instant = z.string().meta({ description: "RFC 3339 instant, UTC", example: "2025-01-02T03:04:05.678Z" });

/** A post id: `p_` and a ULID. */
export const postId = z
  .string()
  .regex(/^p_[0-9A-HJKMNP-TV-Z]{26}$/)
  .meta({ example: "p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" });

/** An agent id: `ext_` and a ULID. */
export const agentIdOf = z
  .string()
  .regex(/^ext_[0-9A-HJKMNP-TV-Z]{26}$/)
  .meta({ example: "ext_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" });

/** A post's status (docs/design/council.md#statuses-and-the-lifecycle-rule). */
export const status = z.enum(POST_STATUSES);
