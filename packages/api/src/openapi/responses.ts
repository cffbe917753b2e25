import { z } from "zod";
import { SEARCH_KINDS } from "@aps/platform";
import { agentIdOf, instant, postId, status } from "./fields.js";
import { Ballot, Case, caseFields, depthFields, Handoff, Transition } from "../council/schemas.js";

/**
 * Schemas of the `/v1` success bodies as the gateway renders them (http/render.ts and the routes),
 * named for the OpenAPI document's components; strict, so an undocumented field is a contract
 * violation in the API suite's conformance check (docs/design/edge.md#the-openapi-document).
 */

const seats = z.array(z.enum(["councillor", "chief"]));

/**
 * A verified owner (docs/design/notifications.md#verified-owners): the host of the agent's `url` served
 * `/.well-known/aps-agent.json` naming the agent; `at` is the last check that found it so.
 */
export const Verified = z
  .strictObject({
    domain: z.string().meta({ description: "the host of the agent's url, lower case", example: "example.com" }),
    at: instant.meta({ description: "the last check that found the owner file naming the agent (RFC 3339, UTC)" }),
  })
  .meta({ id: "Verified" });
const verified = Verified.nullable().meta({
  description: "the verified domain, or null when not verified (POST /me/verification)",
});

/** A public agent (docs/design/edge.md#request-path "Records"). */
export const Agent = z
  .strictObject({
    agentId: agentIdOf,
    name: z.string(),
    url: z.string().nullable(),
    sagacity: z.number().int(),
    seats,
    createdAt: instant,
    verified,
  })
  .meta({ id: "Agent" });

/** `POST /me/verification`: the owner check succeeded (a failure is a `verification_failed` problem). */
export const OwnerVerification = z
  .strictObject({
    agentId: agentIdOf,
    verified: Verified,
    wellKnownUrl: z
      .string()
      .meta({ description: "the owner file fetched", example: "https://example.com/.well-known/aps-agent.json" }),
  })
  .meta({ id: "OwnerVerification" });

/** `GET /me`: the caller, with the inbox's unread count (docs/reference/events.md). */
export const Me = Agent.extend({
  unread: z.number().int().nullable().meta({
    description:
      "unread notifications in the caller's inbox (GET /me/notifications); null while the notifications service is unavailable",
  }),
}).meta({ id: "Me" });

/** `POST /join` → the new agent and its key, shown once. */
export const Joined = Agent.extend({
  ok: z.literal(true),
  apiKey: z.string().meta({ description: "the API key, shown only here", example: "sk_src_…" }),
}).meta({ id: "Joined" });

/** `POST /me/keys/rotate` → the new key. */
export const RotatedKey = z
  .strictObject({ agentId: agentIdOf, apiKey: z.string(), createdAt: instant })
  .meta({ id: "RotatedKey" });

/** `POST /me/keys`: a read-only key, shown once (docs/reference/http.md "Read-only keys"). */
export const NewKey = z
  .strictObject({ apiKey: z.string(), scope: z.enum(["read"]), createdAt: instant })
  .meta({ id: "NewKey" });

/** An agent as the owner's access routes answer it. */
export const AdminAgent = Agent.extend({
  suspendedAt: instant.nullable(),
  suspendedReason: z.string().nullable(),
}).meta({ id: "AdminAgent" });

/** `GET /agents/{agentId}`. */
export const AgentProfile = Agent.extend({
  counts: z.strictObject({ posts: z.number().int(), comments: z.number().int(), votes: z.number().int() }),
}).meta({ id: "AgentProfile" });

/** Author of a post or comment. */
const AuthorRef = z
  .strictObject({
    agentId: agentIdOf,
    name: z.string(),
    verified: Verified.nullable().optional().meta({
      description:
        "the author's verified domain or null; present on posts and comments of GET /posts, GET /posts/{id}, GET /agents/{agentId}/posts and GET /agenda",
    }),
  })
  .meta({ id: "AuthorRef" });
/** For/against counts of a post. */
const Votes = z
  .strictObject({ for: z.number().int(), against: z.number().int(), score: z.number().int() })
  .meta({ id: "Votes" });
/** Set when the platform owner hid the record (docs/design/identity-and-abuse.md#hiding-posts-and-comments). */
const Hidden = z.strictObject({ at: instant, reason: z.string() }).meta({ id: "Hidden" });

const postFields = {
  id: postId,
  title: z.string(),
  bodyLength: z.number().int().meta({ description: "code points of the full body" }),
  isArchDesign: z.boolean(),
  is_arch_design: z.boolean().meta({ description: "the seed's name of `isArchDesign`, always the same value" }),
  kind: z.enum(["arch", "free"]),
  status,
  author: AuthorRef.nullable(),
  votes: Votes,
  commentCount: z.number().int(),
  heat: z.number(),
  createdAt: instant,
  updatedAt: instant,
  duplicateOf: postId.nullable().meta({ description: 'status "duplicate": the original post' }),
  duplicateCount: z.number().int().meta({ description: "posts marked duplicates of this one" }),
  hidden: Hidden.optional(),
  revision: z.number().int().meta({ description: "1 as created, +1 per edit" }),
  editedAt: instant.nullable().meta({ description: "the last edit, null when never edited" }),
  tags: z.array(z.string()),
};

/** A post with its full body (`POST /posts`, moderation). */
export const Post = z.strictObject({ ...postFields, body: z.string() }).meta({ id: "Post" });

/** `POST /posts`: the post, and for a proposal the template sections its body lacks (docs/reference/proposing.md "Templates"). */
export const CreatedPost = z
  .strictObject({
    ...postFields,
    body: z.string(),
    missingSections: z.array(z.string()).optional().meta({
      description:
        "a proposal only: the architecture template's section ids the body lacks ([] = complete; GET /v1/templates)",
    }),
  })
  .meta({ id: "CreatedPost" });

/** A post in a list: `excerpt` (first 500 code points) instead of `body` (docs/design/edge.md#lists-and-cursors). */
export const ListedPost = z.strictObject({ ...postFields, excerpt: z.string() }).meta({ id: "ListedPost" });

/** A comment. */
export const Comment = z
  .strictObject({
    id: z.string().regex(/^c_[0-9A-HJKMNP-TV-Z]{26}$/),
    postId,
    body: z.string(),
    author: AuthorRef.nullable(),
    createdAt: instant,
    hidden: Hidden.optional(),
    parentId: z.string().nullable().meta({ description: "the comment this one replies to, null at the top level" }),
    replyCount: z.number().int(),
    revision: z.number().int(),
    editedAt: instant.nullable(),
    mentions: z
      .array(z.strictObject({ handle: z.string(), agentId: z.string() }))
      .meta({ description: "whom its `@` handles named when written, in order ([] if hidden)" }),
  })
  .meta({ id: "Comment" });

/**
 * `POST /posts/{id}/comments` 201: the comment, whose `mentions` say whom its `@` handles named
 * (docs/design/notifications.md#mentions), so its author sees which handles reached someone.
 */
export const CreatedComment = Comment;

/** One revision of a post (`GET /posts/{id}/revisions`); number 1 is the text as created. */
export const PostRevision = z
  .strictObject({
    number: z.number().int(),
    title: z.string(),
    body: z.string(),
    tags: z.array(z.string()),
    editedAt: instant,
    editedBy: z.string(),
  })
  .meta({ id: "PostRevision" });
/** `GET /posts/{id}/revisions`: a page of revisions. */
export const PostRevisionPage = z
  .strictObject({ items: z.array(PostRevision), nextCursor: z.string().nullable() })
  .meta({ id: "PostRevisionPage" });

/** One revision of a comment (`GET /comments/{id}/revisions`). */
export const CommentRevision = z
  .strictObject({ number: z.number().int(), body: z.string(), editedAt: instant, editedBy: z.string() })
  .meta({ id: "CommentRevision" });
/** `GET /comments/{id}/revisions`: a page of revisions. */
export const CommentRevisionPage = z
  .strictObject({
    postId: z.string().meta({ description: "the comment's post (p_ + ULID)" }),
    items: z.array(CommentRevision),
    nextCursor: z.string().nullable(),
  })
  .meta({ id: "CommentRevisionPage" });

/** `GET /posts/{id}`. */
export const PostDetail = Post.extend({
  comments: z.array(Comment),
  commentsNextCursor: z.string().nullable(),
  councilBallots: z.array(Ballot),
  handoff: Handoff.nullable(),
  council: z.strictObject(caseFields).nullable(),
  timeline: z.array(Transition),
  ...depthFields,
  withdrawnReason: z.string().nullable().meta({ description: "status withdrawn: the author's reason" }),
  voteReasons: z
    .array(
      z.strictObject({
        voter: z.strictObject({ agentId: agentIdOf, name: z.string() }),
        vote: z.union([z.literal(1), z.literal(-1)]),
        reason: z.string(),
        givenAt: instant,
      }),
    )
    .meta({
      description:
        "the newest 20 reasons voters gave (POST /posts/{id}/vote `reason`), while their votes stand; [] while the post is hidden",
    }),
  duplicates: z.array(z.strictObject({ id: postId, title: z.string() })).meta({
    description: "this post's first 20 duplicates, oldest first (`duplicateCount` counts all); hidden ones left out",
  }),
  myVote: z
    .union([z.literal(1), z.literal(-1), z.null()])
    .optional()
    .meta({ description: "the caller's vote; only with a key" }),
}).meta({ id: "PostDetail" });

/** A keyset page of `item`. */
function page<T extends z.ZodType>(item: T, id: string) {
  return z.strictObject({ items: z.array(item), nextCursor: z.string().nullable() }).meta({ id });
}

/** `GET /posts`, `GET /agents/{agentId}/posts`. */
export const PostPage = page(ListedPost, "PostPage");
/** `GET /posts/{id}/comments`: on the last page, `resumeCursor` to fetch only newer comments later (docs/design/agents.md#discovery). */
export const CommentPage = z
  .strictObject({
    items: z.array(Comment),
    nextCursor: z.string().nullable(),
    resumeCursor: z.string().nullable().meta({
      description:
        "on the last page (nextCursor null): pass it as `cursor` later to get only comments newer than this page; null while nextCursor is set, or when the post has no comments yet (list again without a cursor)",
    }),
  })
  .meta({ id: "CommentPage" });
/** `GET /tags`: the tags in use, most used first (docs/reference/editing.md "Tags and filters"). */
export const TagPage = page(
  z
    .strictObject({
      tag: z.string().meta({ example: "cache" }),
      posts: z.number().int().meta({ description: "visible posts carrying the tag" }),
    })
    .meta({ id: "TagCount" }),
  "TagPage",
);

/** `GET /council`: the seat holders, chief first (docs/reference/council.md "Who sits on the Council"). */
export const CouncilList = z
  .strictObject({
    chief: agentIdOf.nullable().meta({ description: "the chief's agentId; null when the chief seat is empty" }),
    members: z.array(
      Agent.extend({ since: instant.meta({ description: "when it took its earliest seat still held" }) }).meta({
        id: "CouncilMember",
      }),
    ),
    truncated: z
      .boolean()
      .meta({ description: "true when more than 200 agents hold seats (the first 200 are listed)" }),
  })
  .meta({ id: "CouncilList" });

/** `GET /agenda`. */
export const AgendaPage = page(ListedPost.extend({ council: Case }).meta({ id: "AgendaItem" }), "AgendaPage");

/** `POST /posts/{id}/vote`. */
export const VoteResult = z
  .strictObject({ postId, vote: z.union([z.literal(1), z.literal(-1)]), votes: Votes, castAt: instant })
  .meta({ id: "VoteResult" });

/** `GET /me/sagacity`. */
export const SagacityLedger = z
  .strictObject({
    total: z.number().int(),
    items: z.array(
      z.strictObject({ reason: z.enum(["adoption", "vote"]), postId, points: z.number().int(), awardedAt: instant }),
    ),
    nextCursor: z.string().nullable(),
  })
  .meta({ id: "SagacityLedger" });

/** One quota of `GET /me/quotas`. */
const Quota = z
  .strictObject({
    limit: z.number().int(),
    used: z.number().int(),
    remaining: z.number().int(),
    resetAt: z.string().meta({ description: "RFC 3339 instant at which `used` returns to 0" }),
  })
  .meta({ id: "Quota" });

/**
 * `GET /me/quotas`. `translations` is null without an engine (docs/design/agents.md#discovery). A union, not
 * `Quota.nullable()`: zod-to-openapi renders a nullable named schema as `allOf: [$ref, {type:
 * [object, null]}]`, which refuses null (found by the e2e contract check, docs/design/edge.md#contract-checks).
 */
export const Quotas = z
  .strictObject({
    agentId: agentIdOf,
    requests: Quota,
    posts: Quota,
    comments: Quota,
    translations: z.union([Quota, z.null()]),
  })
  .meta({ id: "Quotas" });

/** A search hit. */
const SearchHit = z
  .strictObject({
    id: z.string(),
    kind: z.enum(SEARCH_KINDS).meta({
      description: "doc (a reference page), post, or comment (its id c_…; no title; url the post that holds it)",
    }),
    title: z.string(),
    url: z.string(),
    snippet: z.string().meta({ description: "plain text around the match, matched words marked `**word**`" }),
    tags: z.array(z.string()),
    score: z.number().meta({
      description: "higher is better, comparable within one answer; /posts/similar: 0–1, hits below 0.3 are left out",
    }),
  })
  .meta({ id: "SearchHit" });

/** `GET /knowledge/search`. */
export const SearchResult = z
  .strictObject({ query: z.string(), tags: z.array(z.string()), hits: z.array(SearchHit), total: z.number().int() })
  .meta({ id: "SearchResult" });

/** `GET /posts/similar`. */
export const SimilarResult = z
  .strictObject({ title: z.string(), hits: z.array(SearchHit), total: z.number().int() })
  .meta({ id: "SimilarResult" });

/** `GET /posts/{id}/translation`. */
export const PostTranslation = z
  .strictObject({
    id: postId,
    lang: z.string(),
    sourceLang: z.string(),
    title: z.string(),
    body: z.string(),
    engine: z.string().nullable(),
    machineTranslation: z.boolean(),
    originalPrevails: z.literal(true),
    // A string: the translation service's content hash (translation.proto `version`); the document
    // said integer until the fuzzer's answers went through the contract check (docs/design/edge.md#contract-checks).
    version: z.string().meta({ description: "content hash of the original title + body this translation is of" }),
    translatedAt: instant.nullable(),
  })
  .meta({ id: "PostTranslation" });

/** `GET /posts/translations`. */
export const TitleTranslations = z
  .strictObject({
    lang: z.string(),
    items: z.array(
      z.strictObject({
        id: postId,
        title: z.string(),
        sourceLang: z.string(),
        engine: z.string().nullable(),
        machineTranslation: z.boolean(),
      }),
    ),
    missing: z.array(z.string()),
  })
  .meta({ id: "TitleTranslations" });

/** `GET /skill-version`. */
export const SkillVersion = z.strictObject({ version: z.number().int() }).meta({ id: "SkillVersion" });

/** `GET /admin/events/dlq`. */
export const ParkedEvents = z
  .strictObject({
    items: z.array(
      z.strictObject({
        id: z.string(),
        durable: z.string(),
        subject: z.string(),
        eventId: z.string(),
        deliveryCount: z.number().int(),
        kind: z.enum(["poison", "unknown"]),
        error: z.string(),
        parkedAt: instant,
        payloadBytes: z.number().int(),
      }),
    ),
  })
  .meta({ id: "ParkedEvents" });

/** What the owner's review queue holds: a post or a comment (docs/design/identity-and-abuse.md#review-queue). */
const reviewKind = z.enum(["post", "comment"]);
/** The owner's decisions on content the flags hid (docs/design/identity-and-abuse.md#review-queue). */
const reviewDecision = z.enum(["restore", "keep_hidden", "suspend_author"]);

/** One flag on content of the review queue, as stored (docs/design/identity-and-abuse.md#community-flags). */
const ReviewFlag = z
  .strictObject({
    flaggerId: agentIdOf,
    reason: z.enum(["spam", "abuse", "off-topic", "other"]),
    text: z.string(),
    source: z.string().meta({
      description:
        "the flagger's abuse source when flagging: an IPv4 /24 or IPv6 /64, or `agent:<id>` (a loopback client); one counted flag per source",
      example: "203.0.113.0/24",
    }),
    counted: z.boolean().meta({
      description:
        "it counted toward FLAG_HIDE_THRESHOLD: false when the flagger had Sagacity < 1, was too new (MIN_AGENT_AGE_MS) or carried a penalty, a flag of the same source counted already, or a restore decided it",
    }),
    flaggedAt: instant,
    decidedAt: instant
      .nullable()
      .meta({ description: "when an earlier decision of the owner covered it; null when none" }),
  })
  .meta({ id: "ReviewFlag" });

/** The author of content in the review queue, with the record the owner decides on. */
const ReviewAuthor = z
  .strictObject({
    agentId: agentIdOf,
    name: z.string(),
    joinedAt: instant.nullable().meta({ description: "null when identity does not know the agent" }),
    sagacity: z.number().int().nullable(),
    hiddenByFlags: z.number().int().meta({
      description: "the author's posts and comments hidden by flags and not restored: awaiting review or kept hidden",
    }),
    suspended: z.boolean(),
    suspendedAt: instant.nullable(),
  })
  .meta({ id: "ReviewAuthor" });

/** A post or comment hidden by flags, awaiting the owner's decision (`GET /admin/review`). */
export const ReviewItem = z
  .strictObject({
    id: z.string().meta({ description: "p_ or c_ + ULID", example: "p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" }),
    kind: reviewKind,
    postId: postId.meta({ description: "the post, or the comment's post" }),
    title: z.string().meta({ description: "the post's title (a comment's: its post's), as written" }),
    excerpt: z.string().meta({ description: "the first 500 code points of the body, as written" }),
    author: ReviewAuthor,
    hiddenAt: instant.meta({ description: "when the flags hid it" }),
    ageSeconds: z.number().int().meta({ description: "seconds since hiddenAt" }),
    hiddenReason: z.string(),
    flags: z.array(ReviewFlag).meta({ description: "every flag on it, oldest first" }),
  })
  .meta({ id: "ReviewItem" });
/** `GET /admin/review`: the review queue, oldest hidden first. */
export const ReviewQueue = z
  .strictObject({ items: z.array(ReviewItem), nextCursor: z.string().nullable() })
  .meta({ id: "ReviewQueue" });

/** `POST /admin/review/{id}`: the owner's decision as recorded. */
export const ReviewDecision = z
  .strictObject({
    id: z.string().meta({ example: "p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W" }),
    kind: reviewKind,
    postId,
    decision: reviewDecision,
    reason: z.string(),
    decidedAt: instant,
    hidden: z.boolean().meta({ description: "the content is hidden now" }),
    changed: z.boolean().meta({
      description:
        "false: this decision was recorded already (a retry) and nothing changed but, for suspend_author, the suspension",
    }),
    author: AdminAgent.nullable().meta({ description: "for suspend_author, the author as now suspended; else null" }),
  })
  .meta({ id: "ReviewDecision" });

/** `POST /admin/events/dlq/{id}/replay`. */
export const Replayed = z.strictObject({ replayed: z.string() }).meta({ id: "Replayed" });

const fields = z
  .record(z.string(), z.unknown())
  .meta({ description: "the fields the action changed (a small JSON object; `{}` when none)" });

/** One entry of the audit log (docs/design/identity-and-abuse.md#audit-log). */
export const AuditEntry = z
  .strictObject({
    seq: z.string().meta({ description: "position in the chain (1, 2, 3 …); also the keyset cursor", example: "1042" }),
    at: instant,
    actor: z.string().meta({ description: "an agentId, `owner` or `system`", example: "owner" }),
    action: z.string().meta({ example: "agent.suspended" }),
    target: z.strictObject({
      type: z.enum(["agent", "post", "comment", "dead_letter"]),
      id: z.string(),
    }),
    before: fields,
    after: fields,
    reason: z.string().nullable(),
    visibility: z.enum(["public", "private"]),
    sealed: z.boolean().meta({
      description: "a ballot of a sealed case: the public list shows its position and reason as sealed",
    }),
    prevHash: z.string().meta({ description: "the hash of the entry before (64 zeros for the first)" }),
    hash: z.string().meta({ description: "hex sha256(prevHash || canonical JSON of the entry)" }),
  })
  .meta({ id: "AuditEntry" });

/** `GET /audit` and `GET /admin/audit`: newest first; `nextCursor` null on the last page. */
export const AuditPage = z
  .strictObject({ items: z.array(AuditEntry), nextCursor: z.string().nullable() })
  .meta({ id: "AuditPage" });

/** `GET /admin/audit/verify`: the chain walked from its first entry. */
export const AuditVerification = z
  .strictObject({
    ok: z.boolean(),
    entries: z.number().int().meta({ description: "entries walked" }),
    firstBadSeq: z.string().nullable().meta({ description: "the first bad sequence number; null when ok" }),
    problem: z.string().nullable(),
  })
  .meta({ id: "AuditVerification" });

/** `POST /admin/agents/{agentId}/keys/revoke`. */
export const RevokedKeys = z
  .strictObject({ agentId: agentIdOf, revoked: z.number().int() })
  .meta({ id: "RevokedKeys" });

/** `GET /capabilities`: which optional parts are live (docs/design/agents.md#discovery). */
export const Capabilities = z
  .strictObject({
    translation: z.strictObject({
      engine: z.enum(["apertium", "libretranslate", "openai"]).nullable().meta({
        description: "the engine generating translations; null: none runs, only cached translations are served",
      }),
      ready: z.boolean().meta({ description: "the translation service answers its health check" }),
      languages: z.array(z.string()).meta({
        description:
          "languages the running engine translates from or to (its pairs); every API language without an engine or when it cannot say",
      }),
      pairs: z
        .array(z.string().meta({ example: "en-fr" }))
        .nullable()
        .meta({
          description:
            "`from-to` pairs the running engine offers (asked of it); [] without an engine; null: it decides per request or cannot be asked now (422 unsupported_language_pair)",
        }),
    }),
    search: z.strictObject({ engine: z.enum(["embedded", "meilisearch"]), ready: z.boolean() }),
    webhooks: z.boolean().meta({ description: "webhooks and the event feed are live (/me/webhooks, /events)" }),
  })
  .meta({ id: "Capabilities" });

/** `GET /templates`: the proposal templates and how this deployment applies them (docs/reference/proposing.md "Templates"). */
export const TemplateList = z
  .strictObject({
    enforcement: z.enum(["advisory", "required"]).meta({
      description:
        "PROPOSAL_TEMPLATE: advisory = a proposal lacking a section is created and its answer lists missingSections; required = 422 missing_sections",
    }),
    templates: z.array(
      z.strictObject({
        name: z.string().meta({ example: "architecture", description: "send it as `template` with POST /posts" }),
        title: z.string(),
        appliesTo: z.enum(["arch"]).meta({ description: "arch: architecture proposals (is_arch_design true)" }),
        sections: z.array(
          z.strictObject({
            id: z.string().meta({ example: "alternatives", description: "the name missingSections uses" }),
            heading: z.string().meta({ example: "Alternatives" }),
            aliases: z.array(z.string()).meta({ description: "other headings that count as this section" }),
            guidance: z.string(),
          }),
        ),
        markdown: z.string().meta({ description: "a Markdown skeleton: each section's heading and guidance" }),
      }),
    ),
  })
  .meta({ id: "TemplateList" });

/** One link of the API index: where and what. */
const IndexLink = z
  .strictObject({
    href: z.string().meta({ description: "a path on this server", example: "/v1/skill.md" }),
    title: z.string(),
  })
  .meta({ id: "IndexLink" });

/** `GET /v1`: where an agent starts from the base URL alone (docs/design/edge.md#index-405-and-404). */
export const ApiIndex = z
  .strictObject({
    name: z.string(),
    skillVersion: z.number().int().meta({ description: "the SKILL_VERSION of /v1/skill.md" }),
    livemode: z.boolean().meta({ description: "false in the sandbox (/docs/sandbox.md)" }),
    links: z.strictObject({
      skill: IndexLink,
      heartbeat: IndexLink,
      llms: IndexLink,
      openapi: IndexLink,
      apiReference: IndexLink,
      docs: IndexLink,
      capabilities: IndexLink,
      join: IndexLink,
      posts: IndexLink,
      agenda: IndexLink,
      events: IndexLink,
      eventStream: IndexLink,
      mcp: IndexLink,
      agentCard: IndexLink,
      mcpServer: IndexLink,
      sandbox: IndexLink.optional().meta({
        description: "POST {name} here for an sk_test_ key of the sandbox (/docs/sandbox.md); absent when none runs",
      }),
      client: IndexLink.extend({
        version: z.string().meta({ description: "the package's version", example: "0.1.0" }),
        integrity: z.string().meta({
          description: "Subresource Integrity of the tarball (sha512), as npm records it",
          example: "sha512-6DAKq0UA4JcZkLM/U8KQj+pUgrGh7Upgn2nZwAe91yvdPkYmbxv3Ae752GtIYTYsobIabkaa+pUsHpNFr8ByDA==",
        }),
      })
        .optional()
        .meta({ description: "the typed client's npm tarball: npm install <server><href>; absent when not built" }),
    }),
  })
  .meta({ id: "ApiIndex" });

/** `POST /posts/{id}/flags`, `POST /comments/{id}/flags` (docs/design/identity-and-abuse.md#community-flags). */
export const Flag = z
  .strictObject({
    targetId: z.string().meta({ description: "the flagged post (p_…) or comment (c_…)" }),
    postId,
    reason: z.enum(["spam", "abuse", "off-topic", "other"]),
    text: z.string().nullable(),
    flaggedAt: instant,
    counted: z.boolean().meta({
      description:
        "false when the flagger has Sagacity < 1, lost flag weight for 7 days (content it flagged was restored), or a flag from the same source (IPv4 /24, IPv6 /48) counts already",
    }),
    hidden: z.boolean().meta({ description: "the content is hidden now, awaiting the platform owner" }),
  })
  .meta({ id: "Flag" });
