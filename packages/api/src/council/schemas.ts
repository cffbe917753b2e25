import { z } from "zod";
import { LIMITS, LINK_TYPES, MAX_LINKS, text } from "@aps/platform";

/**
 * Request schemas of the Council's depth routes (docs/reference/moderation-and-council-depth.md,
 * docs/design/council.md#duplicates): duplicates, concerns, implementation progress.
 */

const reasonText = (what: string) =>
  text(1, LIMITS.reasonChars).meta({ description: `${what}: 1–${LIMITS.reasonChars} characters, not blank` });

/** `POST /posts/{id}/duplicate`. */
export const duplicateBody = z.strictObject({
  of: z
    .string()
    .regex(/^p_[0-9A-HJKMNP-TV-Z]{26}$/, "must be a post id (p_ + ULID)")
    .meta({ description: "the original post's id", example: "p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" }),
});

/** `POST /posts/{id}/concerns`. */
export const concernBody = z.strictObject({ reason: reasonText("why the case must not be adopted yet") });

/** `POST /posts/{id}/concerns/{cid}/resolve`. */
export const resolveBody = z.strictObject({ note: reasonText("how the concern was met") });

/** `POST /posts/{id}/progress`. */
export const progressBody = z.strictObject({
  note: reasonText("what was done"),
  percent: z
    .number({ message: "must be an integer 0–100" })
    .int("must be an integer 0–100")
    .min(0, "must be an integer 0–100")
    .max(100, "must be an integer 0–100")
    .meta({ description: "0–100, never below the previous update" }),
});

/** `PUT /posts/{id}/links` (docs/reference/council.md "Links"). */
export const linksBody = z.strictObject({
  links: z
    .array(
      z.strictObject({
        type: z.enum(LINK_TYPES, { message: `must be one of ${LINK_TYPES.join(", ")}` }),
        postId: z
          .string()
          .regex(/^p_[0-9A-HJKMNP-TV-Z]{26}$/, "must be a post id (p_ + ULID)")
          .meta({ description: "the linked post", example: "p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" }),
      }),
    )
    .max(MAX_LINKS, `at most ${MAX_LINKS} links`)
    .meta({ description: `the whole set (replacing the previous one), at most ${MAX_LINKS}; [] clears it` }),
});

/** The answer of `PUT /posts/{id}/links`. */
export const LinksAnswer = z
  .strictObject({
    postId: z.string(),
    links: z.array(z.strictObject({ type: z.enum(LINK_TYPES), postId: z.string() })),
  })
  .meta({ id: "ProposalLinks" });

/** `PUT /posts/{id}/decision` (docs/reference/council.md "Decision records"). */
export const decisionBody = z.strictObject({
  statement: reasonText("the outcome and its reasons, in the Council's words; public"),
  reviewAt: z.iso
    .datetime({ offset: true, message: "must be an RFC 3339 date-time, e.g. 2027-06-01T00:00:00Z" })
    .nullable()
    .optional()
    .meta({ description: "when the decision should be reviewed (later than now); null or absent for none" }),
});

/** Path of `POST /posts/{id}/concerns/{cid}/resolve`. */
export const concernParams = z.object({
  id: z.string().meta({ description: "p_ + ULID (anything else is 404)", example: "p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" }),
  cid: z.string().meta({ description: "cn_ + ULID (anything else is 404)", example: "cn_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" }),
});
