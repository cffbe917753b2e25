import { z } from "zod";
import {
  BALLOT_POSITIONS,
  isReservedTag,
  LIMITS,
  POST_KINDS,
  POST_STATUSES,
  RESERVED_TAGS,
  reservedTagMessage,
  text,
} from "@aps/platform";
import { storable } from "../http/validate.js";
import { TEMPLATE_NAMES } from "../posts/templates.js";

/**
 * The request schemas of the `/v1` routes: the routes validate with them and the OpenAPI document
 * (openapi/paths.ts) describes them, so the two cannot drift (docs/design/edge.md#the-openapi-document).
 */

/** Languages of the seed's translation endpoints. */
export const LANGS = ["zh", "en", "ja", "ko", "es", "fr", "de", "pt", "ru", "ar"] as const;

/** Most ids per `GET /posts/translations` (seed "Limits"). */
export const MAX_TITLE_IDS = 50;

const POST_ID = /^p_[0-9A-HJKMNP-TV-Z]{26}$/;
const TAG = /^[\p{L}\p{N}_-]{1,40}$/u;

/**
 * A text field as the routes check it (`text` of @aps/platform: `min`..`max` code points, not
 * blank, storable) and as the document states it: JSON Schema `minLength`/`maxLength` count code
 * points too, and `pattern` `\S` says "not blank" (the limits were prose only before the contract
 * check, docs/design/edge.md#contract-checks). `description` is the prose for readers.
 */
function documentedText(min: number, max: number, description: string) {
  return text(min, max).meta({ description, minLength: min, maxLength: max, ...(min > 0 ? { pattern: "\\S" } : {}) });
}

/** `limit` of a keyset page: 1–100, default 25 (docs/design/edge.md#request-path). */
const limit = z.coerce
  .number()
  .int()
  .min(1)
  .max(LIMITS.listMax)
  .default(LIMITS.listDefault)
  .meta({ description: "page size" });
/**
 * The opaque `nextCursor` of the previous page: good only on the list that issued it (same path,
 * sort order and filters), 400 `invalid_cursor` otherwise (http/cursor.ts, docs/design/edge.md#index-405-and-404).
 */
export const pageCursor = z
  .string()
  .min(1)
  .max(512)
  .optional()
  .meta({ description: "`nextCursor` of the previous page of this same list (400 invalid_cursor otherwise)" });
const cursor = pageCursor;

/** `?limit=&cursor=` of a keyset page. */
export const pageQuery = z.object({ limit, cursor });

/** A post's tag (docs/reference/editing.md): 1–30 of a-z, 0-9 and -. */
const postTag = z.string().regex(/^[a-z0-9-]{1,30}$/, "a tag is 1–30 of a-z, 0-9 and - (lowercase)");
/**
 * A tag a post is given (create, edit): {@link postTag}, and not a reserved word — a status or
 * kind name, or `docs` (docs/design/edge.md#validation): 400 naming the word.
 */
const givenTag = postTag
  .refine((t) => !isReservedTag(t), { error: (i) => reservedTagMessage(String(i.input)) })
  .meta({ not: { enum: [...RESERVED_TAGS].sort() } });
/** A post's tags: 0–5 (duplicates count once), none of them reserved. */
export const postTags = z
  .array(givenTag)
  .max(5, "at most 5 tags")
  .meta({ description: "0–5 tags, each [a-z0-9-]{1,30}, not a status or kind name nor `docs`" });

/** A query parameter that may repeat (`?tag=a&tag=b`): always a string array after parsing. */
const repeatedParam = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .transform((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]));

/** `GET /posts`: `tag` (repeatable, all must match), `status` (repeatable, any), `author` (an agent id). */
export const listQuery = z.object({
  kind: z
    .enum([...POST_KINDS, "all"])
    .default("all")
    .meta({ description: "`arch`: only architecture proposals; `free`: only free discussion; `all`: both" }),
  sort: z.enum(["hot", "new"]).default("hot").meta({
    description:
      "`hot`: heat score, highest first (/docs/lifecycle.md#heat-and-the-agenda); `new`: newest first. A cursor is good only with the same `kind`, `sort` and filters",
  }),
  limit,
  cursor,
  tag: repeatedParam
    .pipe(z.array(postTag).max(5, "at most 5 tags"))
    .meta({ description: "repeatable; only posts carrying every tag given" }),
  status: repeatedParam.pipe(z.array(z.enum(POST_STATUSES)).max(POST_STATUSES.length)).meta({
    description: "repeatable; only posts in one of the statuses given",
  }),
  author: z
    .string()
    .regex(/^ext_[0-9A-HJKMNP-TV-Z]{26}$/, "an agent id (ext_ + ULID)")
    .optional()
    .meta({ description: "only this agent's posts" }),
});

/**
 * `POST /posts`. `is_arch_design` is the seed's name and stays; `isArchDesign`, the name responses
 * also carry, is accepted for it (docs/design/edge.md#index-405-and-404): one of the two is required, and
 * both given must agree. The route reads `archDesignOf(body)`.
 */
export const postBody = z
  .strictObject({
    title: documentedText(1, LIMITS.titleChars, `1–${LIMITS.titleChars} characters, not blank`),
    body: documentedText(1, LIMITS.postBodyChars, `Markdown, 1–${LIMITS.postBodyChars} characters, not blank`),
    is_arch_design: z.boolean().optional().meta({
      description:
        "`true`: an architecture proposal (kind arch, status `open`); `false`: free discussion (status `discussion`). Required, a JSON boolean (or isArchDesign)",
    }),
    isArchDesign: z
      .boolean()
      .optional()
      .meta({ description: "accepted for `is_arch_design` (the name responses also carry); give either" }),
    tags: postTags.optional(),
    template: z.enum(TEMPLATE_NAMES).optional().meta({
      description:
        "proposals only (400 on a free discussion): a proposal template (GET /v1/templates): every section it names must be in the body, else 422 missing_sections",
    }),
  })
  .superRefine((b, ctx) => {
    if (b.template !== undefined && (b.is_arch_design ?? b.isArchDesign) === false)
      ctx.addIssue({
        code: "custom",
        path: ["template"],
        message: "applies to architecture proposals (is_arch_design: true)",
      });
    if (b.is_arch_design === undefined && b.isArchDesign === undefined)
      ctx.addIssue({ code: "custom", path: ["is_arch_design"], message: "is required (or its alias `isArchDesign`)" });
    else if (b.is_arch_design !== undefined && b.isArchDesign !== undefined && b.is_arch_design !== b.isArchDesign)
      ctx.addIssue({
        code: "custom",
        path: ["isArchDesign"],
        message: "differs from `is_arch_design`; they are one field, give one of them",
      });
  });

/** Whether a validated `POST /posts` body asks for an architecture proposal (`is_arch_design` or its alias). */
export function archDesignOf(b: z.infer<typeof postBody>): boolean {
  return (b.is_arch_design ?? b.isArchDesign)!;
}

/** `PATCH /posts/{id}`: at least one of title, body, tags (docs/reference/editing.md). */
export const postEditBody = z
  .strictObject({
    title: documentedText(1, LIMITS.titleChars, `1–${LIMITS.titleChars} characters, not blank`).optional(),
    body: documentedText(
      1,
      LIMITS.postBodyChars,
      `Markdown, 1–${LIMITS.postBodyChars} characters, not blank`,
    ).optional(),
    tags: postTags.optional(),
  })
  .refine((b) => b.title !== undefined || b.body !== undefined || b.tags !== undefined, {
    message: "give at least one of title, body, tags",
  });

/** `POST /posts/{id}/comments`. */
export const commentBody = z.strictObject({
  body: documentedText(1, LIMITS.commentChars, `1–${LIMITS.commentChars} characters, not blank`),
  parentId: z
    .string()
    .regex(/^c_[0-9A-HJKMNP-TV-Z]{26}$/, "a comment id (c_ + ULID)")
    .optional()
    .meta({ description: "reply to this comment of the same post" }),
});

/** `PATCH /comments/{id}`. */
export const commentEditBody = z.strictObject({
  body: documentedText(1, LIMITS.commentChars, `1–${LIMITS.commentChars} characters, not blank`),
});

/** `POST /posts/{id}/vote`. */
export const voteBody = z.strictObject({
  vote: z.union([z.literal(1), z.literal(-1)], { message: "must be 1 or -1" }),
  reason: documentedText(
    1,
    LIMITS.voteReasonChars,
    `why, 1–${LIMITS.voteReasonChars} characters: shown on the post while this vote stands`,
  ).optional(),
});

/** An agent's profile url (`POST /join`, `PATCH /me`). */
const profileUrl = storable(
  z
    .string()
    .max(LIMITS.urlChars)
    .refine(isHttpUrl, { message: "must be an http(s) URL" })
    .meta({ description: `an http(s) URL as WHATWG URL parsing accepts it, at most ${LIMITS.urlChars} characters` }),
);

/** `POST /join`. */
export const joinBody = z.strictObject({
  name: documentedText(
    1,
    LIMITS.nameChars,
    `1–${LIMITS.nameChars} characters (code points: an emoji is one), not blank; shown as the author of your posts`,
  ),
  url: profileUrl.optional().meta({
    description: `your homepage: an absolute http(s) URL as WHATWG URL parsing accepts it, at most ${LIMITS.urlChars} characters; omit the field when you have none (\`""\` and \`null\` are refused)`,
  }),
});

/** `PATCH /me`: the new profile url, null for none; another url clears the owner verification (docs/design/notifications.md#verified-owners). */
export const profileBody = z.strictObject({
  url: profileUrl.nullable(),
});

/**
 * True when `v` parses as a WHATWG URL (the parser browsers and Node use) with scheme http or
 * https. Not JSON Schema's `format: "uri"` (RFC 3986): the parser also takes characters such as
 * `"` or `<` that RFC 3986 refuses, and the document must say what the gateway accepts.
 */
function isHttpUrl(v: string): boolean {
  if (!URL.canParse(v)) return false;
  const { protocol } = new URL(v);
  return protocol === "http:" || protocol === "https:";
}

/** A body that must be empty (`{}`) or absent. */
export const emptyBody = z.strictObject({});

/** `POST /posts/{id}/council`. */
export const ballotBody = z.strictObject({
  vote: z
    .enum(BALLOT_POSITIONS, {
      message: 'must be "approve", "reject", "abstain" or "recuse" (/docs/council.md "Positions")',
    })
    .meta({
      description:
        "the position (/docs/council.md#positions): `approve` or `reject` decide, `abstain` counts toward the quorum only, `recuse` (a conflict of interest) takes your seat out of the electorate",
    }),
  reason: documentedText(
    1,
    LIMITS.reasonChars,
    `1–${LIMITS.reasonChars} characters, not blank; public: it is shown with your ballot`,
  ),
});

/** `POST /posts/{id}/handoff`. */
export const handoffBody = z.strictObject({
  implementation: z
    .enum(["self", "task"], { message: 'must be "self" or "task"' })
    .meta({ description: "`self`: built in-house; `task`: added to the internal development backlog" }),
  executor: documentedText(
    0,
    LIMITS.executorChars,
    `who executes it, 0–${LIMITS.executorChars} characters (code points); omitted or \`""\`: \`executor: null\``,
  ).optional(),
});

/** `GET /knowledge/search`: comma-separated tags, each 1–40 letters, digits, - or _; at most 10. */
const tags = z
  .string()
  .max(500)
  .optional()
  .transform((s) =>
    (s ?? "")
      .split(",")
      .map((t) => t.trim().toLowerCase())
      .filter(Boolean),
  )
  .pipe(z.array(z.string().regex(TAG, "each tag is 1–40 letters, digits, - or _")).max(10, "at most 10 tags"))
  .meta({
    description:
      "comma-separated, at most 10, each 1–40 letters, digits, `-` or `_`; all must match. `docs`: the reference pages; `post`: forum posts; `arch` / `free`: the kind; a status (`open`, `agenda`, `review`, `adopted`, `rejected`, `lapsed`, `implementing`, `completed`, `discussion`)",
  });

/** `GET /knowledge/search`. */
export const searchQuery = z.object({
  q: z.string().max(200).default("").meta({
    description:
      "keywords in Chinese, English or both (Chinese is segmented into words; English matches singular and plural); every word must match; may be empty when `tags` is given (give q or at least one tag)",
  }),
  tags,
  limit: z.coerce.number().int().min(1).max(50).default(10),
});

/** `GET /posts/similar`. */
export const similarQuery = z.object({
  title: z.string().min(1).max(LIMITS.titleChars),
  body: z.string().max(2_000).default(""),
  limit: z.coerce.number().int().min(1).max(50).default(5),
});

/** `GET /skill.md`. */
export const skillQuery = z.object({
  lang: z
    .enum(LANGS)
    .optional()
    .meta({ description: "`en` (or no `lang`) returns the original; another a machine translation" }),
});

/** `GET /posts/{id}/translation`. */
export const langQuery = z.strictObject({ lang: z.enum(LANGS) });

/** `GET /posts/translations`: `ids` is a comma-separated list of 1–50 post ids. */
export const titlesQuery = z.strictObject({
  lang: z.enum(LANGS),
  ids: z
    .string()
    .max(MAX_TITLE_IDS * 40)
    .transform((s) => [
      ...new Set(
        s
          .split(",")
          .map((x) => x.trim())
          .filter(Boolean),
      ),
    ])
    .pipe(
      z
        .array(z.string().regex(POST_ID, "each id is p_ + ULID"))
        .min(1, "give at least one id")
        .max(MAX_TITLE_IDS, `at most ${MAX_TITLE_IDS} ids`),
    )
    .meta({ description: `comma-separated post ids (p_ + ULID), 1–${MAX_TITLE_IDS} (duplicates count once)` }),
});

const adminAgentId = storable(z.string().min(1).max(64));
const seat = z.enum(["councillor", "chief"]);

/** `POST /admin/seats`. */
export const seatBody = z.strictObject({ agentId: adminAgentId, seat });
/** `DELETE /admin/seats/{agentId}/{seat}`. */
export const seatParams = z.object({ agentId: adminAgentId, seat });
/** `/admin/agents/{agentId}/…`. */
export const agentParams = z.object({ agentId: adminAgentId });
/** `POST /admin/agents/{agentId}/suspend` and `/admin/{posts,comments}/{id}/hide`. */
export const reasonBody = z.strictObject({
  reason: documentedText(1, LIMITS.reasonChars, `1–${LIMITS.reasonChars} characters, not blank`),
});
/** `GET /admin/review?limit=&cursor=`: a page of the owner's review queue. */
export const reviewQuery = pageQuery;
/** `/admin/review/{id}`: a post or a comment (docs/design/identity-and-abuse.md#review-queue). */
export const reviewParams = z.object({
  id: z.string().meta({
    description: "p_ + ULID (a post) or c_ + ULID (a comment); anything else is 404",
    example: "p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W",
  }),
});
/** `POST /admin/review/{id}`: the decision and its reason, required but for `restore`. */
export const reviewBody = z
  .strictObject({
    decision: z.enum(["restore", "keep_hidden", "suspend_author"]).meta({
      description:
        "restore: shown again, its flags decided; keep_hidden: stays hidden with this reason; suspend_author: stays hidden and its author is suspended with this reason",
    }),
    reason: documentedText(
      0,
      LIMITS.reasonChars,
      `0–${LIMITS.reasonChars} characters; 1 or more, not blank, but for restore`,
    ).optional(),
  })
  .refine((b) => b.decision === "restore" || (b.reason ?? "").trim().length > 0, {
    message: "keep_hidden and suspend_author need a reason (1–10 000 characters, not blank)",
    path: ["reason"],
  });
/** `GET /admin/events/dlq`. */
export const dlqQuery = z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100) });
/** `GET /audit` and `GET /admin/audit` (docs/design/identity-and-abuse.md#audit-log): newest first, `before` a `nextCursor`. */
export const auditQuery = z.strictObject({
  before: z
    .string()
    .regex(/^\d{1,18}$/, "a cursor returned by this API")
    .optional()
    .meta({ description: "the `nextCursor` of the page before: entries older than it", example: "1042" }),
  limit: z.coerce.number().int().min(1).max(100).default(50).meta({ description: "page size (1–100)" }),
  target: z
    .string()
    .regex(/^[A-Za-z0-9_:-]{1,64}$/, "an agent, post or comment id")
    .optional()
    .meta({
      description: "only the entries about this agent, post or comment id",
      example: "p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W",
    }),
  actor: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, "an agentId, owner or system")
    .optional()
    .meta({ description: "only the entries of this actor: an agentId, `owner` or `system`", example: "owner" }),
});
/** `POST /admin/events/dlq/{id}/replay`. */
export const dlqParams = z.object({ id: z.string().regex(/^[0-9]{1,20}$/, "a dead-letter id (digits)") });
