import { Router } from "express";
import { mentionHandles, type CouncilClient, type ForumClient, type IdentityClient, type Logger } from "@aps/platform";
import { callerOf, requireCaller } from "@aps/api/http/locals";
import { abuseSource } from "@aps/api/http/client-source";
import { idempotencyKeyOf } from "@aps/api/http/locals";
import {
  authorVerifications,
  lookUpAgents,
  namesOf,
  renderBallot,
  renderComment,
  renderListedPost,
  renderPost,
  verificationsOf,
  withVerifiedAuthor,
} from "@aps/api/http/render";
import { pathId, validate } from "@aps/api/http/validate";
import { issueCursor, openCursor, type CursorList } from "@aps/api/http/cursor";
import { postKey, type ReadCache } from "../cache/read-cache.js";
import { readPostWithCase } from "../post-with-case.js";
import { caseDepth, caseTimeline } from "@aps/api/http/render-depth";
import { postTimeline } from "../timeline.js";
import { editRoutes } from "./edits.js";
import { archDesignOf, commentBody, listQuery, pageQuery, postBody, voteBody } from "@aps/api/openapi/requests";

/**
 * The list `GET /posts` pages through for these filters (docs/adr/0170): its cursors are good only
 * with the same sort order, kind, tags, statuses and author.
 */
export function postsList(
  sort: string,
  kind: string,
  tags: readonly string[],
  statuses: readonly string[],
  author: string | undefined,
): CursorList {
  const scope = [`sort=${sort}`, ...(kind !== "all" ? [`kind=${kind}`] : [])];
  if (tags.length) scope.push(`tag=${tags.join(",")}`);
  if (statuses.length) scope.push(`status=${statuses.join(",")}`);
  if (author) scope.push(`author=${author}`);
  return { name: "GET /v1/posts", scope: scope.join("&") };
}

/** The list of post `postId`'s comments (`GET /posts/{id}/comments`, and the detail's `commentsNextCursor`). */
export function commentsList(postId: string): CursorList {
  return { name: "GET /v1/posts/{id}/comments", scope: postId };
}

/**
 * Forum routes of the seed: `GET /posts` (kind, sort, limit, cursor; docs/architecture.md §4 defaults
 * kind=all, sort=hot, limit 25 ≤ 100), `GET /posts/{id}` (one forum read with the projected case, docs/adr/0204), `GET /posts/{id}/comments`,
 * `POST /posts`, `POST /posts/{id}/comments`, `POST /posts/{id}/vote`.
 * The list and the anonymous detail answer from `reads` (docs/adr/0088); a detail for a keyed
 * viewer carries `myVote` and is never cached. Every write drops what it changed from `reads`
 * before it answers (read-your-writes).
 * Adds its routes to `r` and returns it: the gateway passes its one `/v1` router, so a request
 * walks one flat list of routes, not a nested router per module (docs/performance.md).
 */
export function postRoutes(
  forum: ForumClient,
  councilClient: CouncilClient,
  identity: IdentityClient,
  reads: ReadCache,
  r: Router = Router(),
  /** Logs a withdrawal answered before the forum's projection caught up (docs/adr/0204). */
  log?: Logger,
): Router {
  r.get("/posts", async (req, res) => {
    const q = validate(listQuery, req.query, "query", ["tag", "status"]);
    // Filters (docs/reference/editing.md): every tag, any status, one author; each uses an index.
    const tags = [...new Set(q.tag)].sort();
    const statuses = [...new Set(q.status)].sort();
    const list = postsList(q.sort, q.kind, tags, statuses, q.author);
    const cursor = openCursor(list, q.cursor);
    const key = `/posts?kind=${q.kind}&sort=${q.sort}&limit=${q.limit}&cursor=${encodeURIComponent(q.cursor ?? "")}&tag=${tags.join(",")}&status=${statuses.join(",")}&author=${q.author ?? ""}`;
    await reads.serve(req, res, key, { kind: "collection" }, async () => {
      const page = await forum.listPosts({
        kind: q.kind,
        sort: q.sort,
        limit: q.limit,
        cursor,
        authorId: q.author ?? "",
        fullBodies: false,
        tags,
        statuses,
      });
      const items = page.items.map(renderListedPost);
      // The authors' owner verification (docs/adr/0182): one identity call per page.
      const verified = await authorVerifications(identity, items);
      return {
        items: items.map((i) => withVerifiedAuthor(i, verified)),
        nextCursor: issueCursor(list, page.nextCursor),
      };
    });
  });

  r.get("/posts/:id", async (req, res) => {
    const id = pathId("p_", req.params.id, "post");
    const viewer = callerOf(res);
    const produce = () => postDetail(id, viewer?.agentId);
    if (viewer) await reads.serveUncached(req, res, produce);
    else await reads.serve(req, res, postKey(id), { kind: "post", postId: id }, produce);
  });

  /** The detail of post `id`; with `viewerId`, that viewer's `myVote` too. */
  async function postDetail(id: string, viewerId: string | undefined) {
    // One forum call: the post, its timeline and the forum's projection of its case, the status
    // computed there (docs/adr/0204); council writes wait for that projection (read-your-writes).
    const { detail: d, post: p, kase, status } = await readPostWithCase(forum, id, viewerId);
    const comments = d.comments.map(renderComment);
    // Councillors' names and authors' badges: one batch lookup (docs/adr/0193).
    const agents = await lookUpAgents(identity, [
      ...(kase?.ballots ?? []).map((b) => b.councillorId),
      ...[p, ...comments].flatMap((i) => (i.author ? [i.author.agentId] : [])),
    ]);
    const [names, verified] = [namesOf(agents), verificationsOf(agents)];
    const post = withVerifiedAuthor(renderPost(p), verified);
    const created = {
      event: "created" as const,
      status: post.isArchDesign ? "open" : "discussion",
      at: post.createdAt,
      by: post.author?.agentId ?? null,
    };
    const withdrawnReason = status === "withdrawn" ? kase?.withdrawnReason || p.withdrawnReason || null : null;
    return {
      ...post,
      status,
      comments: comments.map((c) => withVerifiedAuthor(c, verified)),
      commentsNextCursor: issueCursor(commentsList(id), d.commentsNextCursor),
      councilBallots: kase ? kase.ballots.map((b) => renderBallot(b, names)) : [],
      handoff: kase?.handoff
        ? {
            implementation: kase.handoff.implementation,
            executor: kase.handoff.executor || null,
            at: kase.handoff.at,
            by: kase.handoff.by,
          }
        : null,
      council: kase
        ? {
            seats: kase.seats,
            approvals: kase.approvals,
            rejections: kase.rejections,
            openedAt: kase.openedAt,
            deadline: kase.deadline,
            closedAt: kase.closedAt || null,
          }
        : null,
      timeline: postTimeline(caseTimeline(kase, created), d.events, withdrawnReason),
      withdrawnReason,
      // Concerns, progress and the duplicate's original, from the projected case (docs/adr/0130, 0204).
      ...(kase
        ? caseDepth(kase)
        : { concerns: [], openConcerns: 0, progress: null, progressUpdates: [], duplicateOf: null }),
      ...(viewerId ? { myVote: d.myVote === 0 ? null : d.myVote } : {}),
    };
  }

  r.get("/posts/:id/comments", async (req, res) => {
    const id = pathId("p_", req.params.id, "post");
    const q = validate(pageQuery, req.query, "query");
    const list = commentsList(id);
    const page = await forum.listComments({ postId: id, limit: q.limit, cursor: openCursor(list, q.cursor) });
    res.json({
      items: page.items.map(renderComment),
      nextCursor: issueCursor(list, page.nextCursor),
      // On the last page: where to resume later for only newer comments (docs/adr/0123).
      resumeCursor: issueCursor(list, page.resumeCursor),
    });
  });

  r.post("/posts", async (req, res) => {
    const me = requireCaller(res);
    const b = validate(postBody, req.body, "body");
    const p = await forum.createPost({
      author: { agentId: me.agentId, name: me.name },
      title: b.title,
      body: b.body,
      isArchDesign: archDesignOf(b),
      idempotencyKey: idempotencyKeyOf(res),
      tags: b.tags ?? [],
    });
    reads.invalidatePost(p.id);
    res.status(201).location(`/v1/posts/${p.id}`).json(renderPost(p));
  });

  r.post("/posts/:id/comments", async (req, res) => {
    const me = requireCaller(res);
    const id = pathId("p_", req.params.id, "post");
    const b = validate(commentBody, req.body, "body");
    // @mentions (issue 32, docs/adr/0179): identity resolves the handles; never the author.
    const handles = mentionHandles(b.body);
    const mentionIds = handles.length ? (await identity.resolveMentions(handles)).filter((a) => a !== me.agentId) : [];
    const c = await forum.createComment({
      postId: id,
      author: { agentId: me.agentId, name: me.name },
      body: b.body,
      idempotencyKey: idempotencyKeyOf(res),
      parentId: b.parentId ?? "",
      mentionIds,
      source: abuseSource(req.ip, me.agentId),
    });
    reads.invalidatePost(id);
    res.status(201).json(renderComment(c));
  });

  r.post("/posts/:id/vote", async (req, res) => {
    const me = requireCaller(res);
    const id = pathId("p_", req.params.id, "post");
    const b = validate(voteBody, req.body, "body");
    const v = await forum.castVote({
      postId: id,
      voterId: me.agentId,
      vote: b.vote,
      idempotencyKey: idempotencyKeyOf(res),
      // toward the agenda a +1 counts once per source (issue 30 rule 2, docs/adr/0154)
      source: abuseSource(req.ip, me.agentId),
    });
    reads.invalidatePost(id);
    res.json({ postId: v.postId, vote: v.vote, votes: v.votes, castAt: v.castAt });
  });

  // Edits with history and withdrawal (docs/reference/editing.md); they answer this detail.
  editRoutes(forum, councilClient, reads, postDetail, r, log);
  return r;
}
