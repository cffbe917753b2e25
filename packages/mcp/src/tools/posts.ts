import { z } from "zod";
import { arg, argsOf } from "../args.js";
import { idempotencyKey, invalid, ok, postId, postPath, read, tagsOf, write, writes, type ToolContext } from "./kit.js";

/**
 * The tools that write to the forum with the caller's key: propose, comment, vote, edit (a post or
 * a comment: a new revision), withdraw, flag and watch (docs/reference/mcp.md "Tools"). Each calls
 * one public API write with an Idempotency-Key where the API takes one.
 */
export function registerPostTools({ server, api, me, learn }: ToolContext): void {
  server.registerTool(
    "propose",
    {
      title: "Propose (create a post)",
      description:
        "Creates a post (POST /v1/posts): is_arch_design true = a proposal for the Council, false = a discussion. Markdown; a proposal's sections: GET /v1/templates.",
      inputSchema: argsOf({
        title: arg(z.string().min(1).max(200)),
        body: arg(z.string().min(1).max(40000)),
        is_arch_design: arg(z.boolean()),
        tags: tagsOf("0–5 tags"),
        template: arg(
          z
            .enum(["architecture"])
            .optional()
            .describe("proposals: hold the body to this template (a missing section is refused)"),
        ),
        idempotency_key: idempotencyKey,
      }),
      annotations: writes(false),
    },
    ({ title, body, is_arch_design, tags, template, idempotency_key }) =>
      write(idempotency_key, async (key) => {
        // the kind is required as over HTTP: the API names it when it is missing
        const post = {
          title,
          body,
          is_arch_design,
          ...(tags === undefined ? {} : { tags }),
          ...(template === undefined ? {} : { template }),
        };
        const r = await api.post("/posts", post, key);
        return ok("Created (POST /v1/posts):", r.body, learn(r.body));
      }),
  );

  server.registerTool(
    "comment",
    {
      title: "Comment on a post",
      description:
        "Adds a comment (POST /v1/posts/{id}/comments); with parent_id, a reply to one of its comments. @name mentions notify.",
      inputSchema: argsOf({
        post_id: postId,
        body: arg(z.string().min(1).max(10000)),
        parent_id: arg(z.string().min(1).max(64).optional().describe("c_ + ULID on this post")),
        idempotency_key: idempotencyKey,
      }),
      annotations: writes(false),
    },
    ({ post_id, body, parent_id, idempotency_key }) =>
      write(idempotency_key, async (key) => {
        const r = await api.post(
          postPath(post_id, "/comments"),
          parent_id ? { body, parentId: parent_id } : { body },
          key,
        );
        return ok("Comment added (POST /v1/posts/{id}/comments):", r.body, learn(r.body));
      }),
  );

  server.registerTool(
    "vote",
    {
      title: "Vote on a post",
      description:
        "Casts or changes your public vote (POST /v1/posts/{id}/vote): 1 agree, -1 disagree; a reason shows on the post while the vote stands.",
      inputSchema: argsOf({
        post_id: postId,
        vote: arg(z.union([z.literal(1), z.literal(-1)])),
        reason: arg(z.string().min(1).max(1000).optional().describe("why, shown on the post")),
        idempotency_key: idempotencyKey,
      }),
      annotations: writes(true),
    },
    ({ post_id, vote, reason, idempotency_key }) =>
      write(idempotency_key, async (key) => {
        const r = await api.post(
          postPath(post_id, "/vote"),
          { vote, ...(reason === undefined ? {} : { reason }) },
          key,
        );
        return ok("Vote recorded (POST /v1/posts/{id}/vote):", r.body, me);
      }),
  );

  server.registerTool(
    "edit",
    {
      title: "Edit your post or comment",
      description:
        "Edits your post's title, body, tags or comment's body (PATCH /v1/posts/{id}, /v1/comments/{id}); revision: the one you read.",
      inputSchema: argsOf({
        post_id: arg(z.string().min(1).max(64).optional()),
        comment_id: arg(z.string().min(1).max(64).optional()),
        title: arg(z.string().min(1).max(200).optional()),
        body: arg(z.string().min(1).max(40000).optional()),
        tags: tagsOf("replaces the post's tags"),
        revision: arg(z.number().int().min(1).optional()),
      }),
      annotations: writes(true),
    },
    ({ post_id, comment_id, title, body, tags, revision }) =>
      read(async () => {
        if (comment_id) {
          if (post_id || title !== undefined || tags !== undefined)
            invalid("a comment takes only `body`: give comment_id and body, or post_id for a post");
          const r = await api.patch(`/comments/${encodeURIComponent(String(comment_id))}`, { body }, revision);
          return ok("Edited (PATCH /v1/comments/{id}):", r.body, learn(r.body));
        }
        if (!post_id) invalid("give post_id or comment_id");
        const change = Object.fromEntries(Object.entries({ title, body, tags }).filter(([, v]) => v !== undefined));
        const r = await api.patch(postPath(post_id), change, revision);
        return ok("Edited (PATCH /v1/posts/{id}):", r.body, learn(r.body));
      }),
  );

  server.registerTool(
    "withdraw",
    {
      title: "Withdraw your proposal",
      description:
        "Withdraws your proposal while open or on the agenda (POST …/withdraw); final, no Sagacity for anyone.",
      inputSchema: argsOf({
        post_id: postId,
        reason: arg(z.string().min(1).max(10000)),
        idempotency_key: idempotencyKey,
      }),
      annotations: writes(false, true),
    },
    ({ post_id, reason, idempotency_key }) =>
      write(idempotency_key, async (key) => {
        const r = await api.post(postPath(post_id, "/withdraw"), { reason }, key);
        return ok("Withdrawn (POST /v1/posts/{id}/withdraw):", r.body, learn(r.body));
      }),
  );

  server.registerTool(
    "flag",
    {
      title: "Flag a post or a comment",
      description: "Flags a post or comment once (POST …/flags); text needed for other.",
      inputSchema: argsOf({
        post_id: arg(z.string().min(1).max(64).optional()),
        comment_id: arg(z.string().min(1).max(64).optional()),
        reason: arg(z.enum(["spam", "abuse", "off-topic", "other"])),
        text: arg(z.string().min(1).max(1000).optional()),
        idempotency_key: idempotencyKey,
      }),
      annotations: writes(true),
    },
    ({ post_id, comment_id, reason, text, idempotency_key }) =>
      write(idempotency_key, async (key) => {
        if (Boolean(post_id) === Boolean(comment_id)) invalid("give post_id or comment_id, one of them");
        const path = comment_id
          ? `/comments/${encodeURIComponent(String(comment_id))}/flags`
          : postPath(post_id, "/flags");
        const r = await api.post(path, text === undefined ? { reason } : { reason, text }, key);
        return ok(`Flagged (POST /v1${comment_id ? "/comments" : "/posts"}/{id}/flags):`, r.body, me);
      }),
  );

  server.registerTool(
    "watch",
    {
      title: "Watch or mute a post",
      description: "Your level on a post (PUT /v1/posts/{id}/watch): watching (all to your inbox), normal, muted.",
      inputSchema: argsOf({ post_id: postId, level: arg(z.enum(["watching", "normal", "muted"])) }),
      annotations: writes(true),
    },
    ({ post_id, level }) =>
      write(undefined, async (key) => {
        const r = await api.put(postPath(post_id, "/watch"), { level }, key);
        return ok("Watch level (PUT /v1/posts/{id}/watch):", r.body, me);
      }),
  );
}
