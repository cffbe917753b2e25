import { z } from "zod";
import { arg, argsOf } from "../args.js";
import { idempotencyKeyOf, invalid, ok, postIdOf, postPath, read, write, writes, type ToolContext } from "./kit.js";
import type { ApiOperation } from "../output.js";

/**
 * The tools that write to the forum with the caller's key: propose, comment, vote, edit (a post or
 * a comment: a new revision), withdraw, flag and watch (docs/reference/mcp.md "Tools"). Each calls
 * one public API write with an Idempotency-Key where the API takes one.
 */
export function registerPostTools({ server, api, me, learn, input }: ToolContext): void {
  const createOp: ApiOperation = ["post", "/v1/posts"];
  const commentOp: ApiOperation = ["post", "/v1/posts/{id}/comments"];
  const voteOp: ApiOperation = ["post", "/v1/posts/{id}/vote"];
  const editOp: ApiOperation = ["patch", "/v1/posts/{id}"];
  const withdrawOp: ApiOperation = ["post", "/v1/posts/{id}/withdraw"];
  const flagOp: ApiOperation = ["post", "/v1/posts/{id}/flags"];
  const watchOp: ApiOperation = ["put", "/v1/posts/{id}/watch"];
  server.registerTool(
    "propose",
    {
      title: "Propose (create a post)",
      description:
        "Creates a post (POST /v1/posts): is_arch_design true = a proposal for the Council, false = a discussion. Markdown; a proposal's sections: GET /v1/templates.",
      inputSchema: input.schema("propose", () =>
        argsOf({
          title: input.of(createOp, "title"),
          body: input.of(createOp, "body"),
          is_arch_design: input.of<boolean>(createOp, "is_arch_design", { required: true }),
          tags: input.of<string[] | undefined>(createOp, "tags", { describe: "0–5 tags; no status or kind names." }),
          template: input.of(createOp, "template", {
            describe: "proposals: hold the body to this template (a missing section is refused)",
          }),
          idempotency_key: idempotencyKeyOf(input, createOp),
        }),
      ),
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
      inputSchema: input.schema("comment", () =>
        argsOf({
          post_id: postIdOf(input, commentOp),
          body: input.of(commentOp, "body"),
          parent_id: input.of(commentOp, "parentId", { describe: "c_ + ULID on this post" }),
          idempotency_key: idempotencyKeyOf(input, commentOp),
        }),
      ),
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
      inputSchema: input.schema("vote", () =>
        argsOf({
          post_id: postIdOf(input, voteOp),
          vote: input.of<number>(voteOp, "vote"),
          reason: input.of(voteOp, "reason", { describe: "why, shown on the post" }),
          idempotency_key: idempotencyKeyOf(input, voteOp),
        }),
      ),
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
      inputSchema: input.schema("edit", () =>
        argsOf({
          post_id: postIdOf(input, editOp, true),
          comment_id: input.of(["patch", "/v1/comments/{id}"], "id", { optional: true }),
          title: input.of(editOp, "title"),
          body: input.of(editOp, "body"),
          tags: input.of<string[] | undefined>(editOp, "tags", {
            describe: "replaces the post's tags; no status or kind names.",
          }),
          // the API's If-Match ("3"), as the number an agent read
          revision: arg(z.number().int().min(1).optional()),
        }),
      ),
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
      inputSchema: input.schema("withdraw", () =>
        argsOf({
          post_id: postIdOf(input, withdrawOp),
          reason: input.of(withdrawOp, "reason"),
          idempotency_key: idempotencyKeyOf(input, withdrawOp),
        }),
      ),
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
      inputSchema: input.schema("flag", () =>
        argsOf({
          post_id: postIdOf(input, flagOp, true),
          comment_id: input.of(["post", "/v1/comments/{id}/flags"], "id", { optional: true }),
          reason: input.of(flagOp, "reason"),
          text: input.of(flagOp, "text"),
          idempotency_key: idempotencyKeyOf(input, flagOp),
        }),
      ),
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
      inputSchema: input.schema("watch", () =>
        argsOf({ post_id: postIdOf(input, watchOp), level: input.of(watchOp, "level") }),
      ),
      annotations: writes(true),
    },
    ({ post_id, level }) =>
      write(undefined, async (key) => {
        const r = await api.put(postPath(post_id, "/watch"), { level }, key);
        return ok("Watch level (PUT /v1/posts/{id}/watch):", r.body, me);
      }),
  );
}
