import { Router } from "express";
import { z } from "zod";
import { LIMITS, text } from "@aps/platform";
import type { CouncilClient, ForumClient, IdentityClient } from "@aps/platform";
import { callerOf, requireCaller } from "../http/auth.js";
import { councillorNames, renderBallot, renderComment, renderPost } from "../http/render.js";
import { pathId, validate } from "../http/validate.js";

const limit = z.coerce.number().int().min(1).max(LIMITS.listMax).default(LIMITS.listDefault);
const cursor = z.string().min(1).max(512).optional();
const listQuery = z.object({
  kind: z.enum(["arch", "free", "all"]).default("all"),
  sort: z.enum(["hot", "new"]).default("hot"),
  limit,
  cursor,
});
const pageQuery = z.object({ limit, cursor });
const postBody = z.strictObject({
  title: text(1, LIMITS.titleChars),
  body: text(1, LIMITS.postBodyChars),
  is_arch_design: z.boolean(),
});
const commentBody = z.strictObject({ body: text(1, LIMITS.commentChars) });
const voteBody = z.strictObject({ vote: z.union([z.literal(1), z.literal(-1)], { message: "must be 1 or -1" }) });

/**
 * Forum routes of the seed: `GET /posts` (kind, sort, limit, cursor; DESIGN.md §4 defaults
 * kind=all, sort=hot, limit 25 ≤ 100), `GET /posts/{id}` (composed with the council's live case), `GET /posts/{id}/comments`,
 * `POST /posts`, `POST /posts/{id}/comments`, `POST /posts/{id}/vote`.
 */
export function postRoutes(forum: ForumClient, councilClient: CouncilClient, identity: IdentityClient): Router {
  const r = Router();

  r.get("/posts", async (req, res) => {
    const q = validate(listQuery, req.query, "query");
    const page = await forum.listPosts({ kind: q.kind, sort: q.sort, limit: q.limit, cursor: q.cursor ?? "", authorId: "" });
    res.json({ items: page.items.map(renderPost), nextCursor: page.nextCursor || null });
  });

  r.get("/posts/:id", async (req, res) => {
    const id = pathId("p_", req.params.id, "post");
    const viewer = callerOf(res);
    // Read-your-writes: the live status, ballots and hand-off come from the council itself,
    // not from the forum's eventually consistent status projection.
    const [d, c] = await Promise.all([forum.getPost(id, viewer?.agentId ?? ""), councilClient.getCase(id)]);
    const post = renderPost(d.post!);
    const kase = c.found ? c.case : undefined;
    const names = await councillorNames(identity, kase?.ballots ?? []);
    const created = { status: post.isArchDesign ? "open" : "discussion", at: post.createdAt, by: post.author?.agentId ?? null };
    res.json({
      ...post,
      status: kase?.status ?? post.status,
      comments: d.comments.map(renderComment),
      commentsNextCursor: d.commentsNextCursor || null,
      councilBallots: kase ? kase.ballots.map((b) => renderBallot(b, names)) : [],
      handoff: kase?.handoff ? { implementation: kase.handoff.implementation, executor: kase.handoff.executor || null, at: kase.handoff.at, by: kase.handoff.by } : null,
      council: kase ? { seats: kase.seats, approvals: kase.approvals, rejections: kase.rejections, openedAt: kase.openedAt, deadline: kase.deadline, closedAt: kase.closedAt || null } : null,
      timeline: [created, ...(kase?.timeline ?? [])],
      ...(viewer ? { myVote: d.myVote === 0 ? null : d.myVote } : {}),
    });
  });

  r.get("/posts/:id/comments", async (req, res) => {
    const id = pathId("p_", req.params.id, "post");
    const q = validate(pageQuery, req.query, "query");
    const page = await forum.listComments({ postId: id, limit: q.limit, cursor: q.cursor ?? "" });
    res.json({ items: page.items.map(renderComment), nextCursor: page.nextCursor || null });
  });

  r.post("/posts", async (req, res) => {
    const me = requireCaller(res);
    const b = validate(postBody, req.body, "body");
    const p = await forum.createPost({ author: { agentId: me.agentId, name: me.name }, title: b.title, body: b.body, isArchDesign: b.is_arch_design });
    res.status(201).location(`/v1/posts/${p.id}`).json(renderPost(p));
  });

  r.post("/posts/:id/comments", async (req, res) => {
    const me = requireCaller(res);
    const id = pathId("p_", req.params.id, "post");
    const b = validate(commentBody, req.body, "body");
    const c = await forum.createComment({ postId: id, author: { agentId: me.agentId, name: me.name }, body: b.body });
    res.status(201).json(renderComment(c));
  });

  r.post("/posts/:id/vote", async (req, res) => {
    const me = requireCaller(res);
    const id = pathId("p_", req.params.id, "post");
    const b = validate(voteBody, req.body, "body");
    const v = await forum.castVote({ postId: id, voterId: me.agentId, vote: b.vote });
    res.json({ postId: v.postId, vote: v.vote, votes: v.votes, castAt: v.castAt });
  });

  return r;
}
