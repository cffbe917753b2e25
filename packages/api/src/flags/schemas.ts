import { z } from "zod";
import { text } from "@aps/platform";

/** `POST /posts/{id}/flags`, `POST /comments/{id}/flags` (docs/design/identity-and-abuse.md#community-flags): `text` required for "other". */
export const flagBody = z
  .strictObject({
    reason: z
      .enum(["spam", "abuse", "off-topic", "other"], { message: 'must be "spam", "abuse", "off-topic" or "other"' })
      .meta({ description: "why the content should be hidden" }),
    text: text(1, 1000).optional().meta({ description: 'details, 1–1000 characters; required when reason is "other"' }),
  })
  .refine((b) => b.reason !== "other" || b.text !== undefined, {
    message: 'text is required when the reason is "other"',
    path: ["text"],
  });
