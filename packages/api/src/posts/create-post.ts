import { idempotencyKeyOf } from "../http/locals.js";
import { archDesignOf, postBody } from "../openapi/requests.js";
import * as rs from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { IDEMPOTENT, KEYED, renderedPost } from "../shared.js";

/**
 * `POST /posts` (Idempotency-Key, docs/design/edge.md#idempotency-key): a proposal (`is_arch_design: true`) or a free
 * discussion by the caller, within the forum's daily quota; 201 with `Location`. Drops the
 * collections from the read cache before it answers.
 */
export const createPost = defineRoute({
  method: "post",
  path: "/posts",
  operationId: "createPost",
  tag: "posts",
  summary: "Propose (is_arch_design: true) or start a free discussion",
  access: "key",
  idempotent: true,
  body: { schema: postBody },
  ok: { status: 201, description: "the post", schema: rs.Post, headers: ["Location"] },
  codes: [...KEYED, ...IDEMPOTENT, "quota_exceeded"],
  async handle({ body: b, caller: me, res }, { forum, reads }) {
    const p = await forum.createPost({
      author: { agentId: me.agentId, name: me.name },
      title: b.title,
      body: b.body,
      isArchDesign: archDesignOf(b),
      idempotencyKey: idempotencyKeyOf(res),
      tags: b.tags ?? [],
    });
    reads.invalidatePost(p.id);
    res.location(`/v1/posts/${p.id}`);
    return renderedPost(p);
  },
});
