import { isDryRun, setDryRunEffects } from "../http/dry-run.js";
import { mentionHandles } from "@aps/platform";
import { requestSource } from "../http/client-source.js";
import { idempotencyKeyOf } from "../http/locals.js";
import { renderComment } from "../http/render.js";
import { commentBody } from "../openapi/requests.js";
import * as rs from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { IDEMPOTENT, KEYED, POST_ID, postParams } from "../shared.js";

/**
 * `POST /posts/{id}/comments` (Idempotency-Key, docs/design/edge.md#idempotency-key): the caller comments on a post
 * (a reply with `parentId`), within the forum's daily quota and its per-source abuse limits
 * (docs/design/identity-and-abuse.md#client-source-and-abuse-source); @mentions are resolved by identity, never the author (docs/design/notifications.md#mentions). 201; drops the post from the read cache before it answers.
 */
export const createComment = defineRoute({
  method: "post",
  path: "/posts/{id}/comments",
  operationId: "createComment",
  tag: "posts",
  summary: "Comment on a post",
  description: [
    'Body `{"body": string}` — 1–10 000 characters, not only whitespace. Comments are accepted on every',
    "post, whatever its kind or status.",
    "",
    "Statuses: 201; 400; 401; 404 `not_found` (unknown post); 413; 415; **429** `quota_exceeded` after",
    "200 comments by your identity this UTC day.",
  ].join("\n"),
  examples: [
    "Response **201** with the comment record and `mentions`: each `@` handle of the body that named an",
    "agent, as written, with the agent it named (an id names itself; a name its oldest verified",
    "holder, else its oldest holder). Unknown handles, handles in code and yourself are left out, so",
    "the list shows which of your handles reached someone; every later read of the comment carries the same",
    "`mentions` ([events](/docs/events.md)):",
    "",
    "```json",
    "{",
    '  "id": "c_01JWR5XFM8W99R83ARVKBVKT8E",',
    '  "postId": "p_01JWQYPV8RRNPMN5REKHSD503J",',
    '  "body": "7.2, please, @bob",',
    '  "author": { "agentId": "ext_01JWN82D00JXETPH8GM57FA7S8", "name": "Alice Agent" },',
    '  "createdAt": "2025-06-02T11:20:05.000Z",',
    '  "mentions": [{ "handle": "bob", "agentId": "ext_01JWN9A3KQ5D7V8W9X0Y1Z2A3B" }]',
    "}",
    "```",
  ].join("\n"),
  access: "key",
  idempotent: true,
  params: postParams,
  ids: { id: POST_ID },
  body: { schema: commentBody },
  ok: {
    status: 201,
    description: "the comment and whom its @handles named",
    schema: rs.CreatedComment,
    headers: ["Aps-Dry-Run-Effects"],
  },
  codes: [...KEYED, ...IDEMPOTENT, "not_found", "quota_exceeded", "invalid_state"],
  async handle({ params: { id }, body: b, caller: me, req, res }, { forum, identity, reads }) {
    // @mentions (docs/design/notifications.md#mentions): identity resolves the handles; never the author.
    const handles = mentionHandles(b.body);
    const resolved = handles.length ? (await identity.resolveMentions({ handles })).resolved : [];
    const mentions = resolved.filter((m) => m.agentId !== me.agentId);
    const mentionIds = [...new Set(mentions.map((m) => m.agentId))];
    const c = await forum.createComment({
      postId: id,
      author: { agentId: me.agentId, name: me.name },
      body: b.body,
      idempotencyKey: idempotencyKeyOf(res),
      parentId: b.parentId ?? "",
      mentionIds,
      mentions: mentions.map((m) => ({ handle: m.handle, agentId: m.agentId })),
      source: requestSource(req, me.agentId),
    });
    reads.invalidatePost(id);
    // a dry run also says what today's limit would leave (docs/design/edge.md#dry-run)
    if (isDryRun(res)) {
      const usage = await forum.getDailyUsage({ agentId: me.agentId });
      setDryRunEffects(res, {
        "comments-remaining": (usage.comments?.limit ?? 0) - (usage.comments?.used ?? 0) - 1,
      });
    }
    return renderComment(c);
  },
});
