import type { identity as proto, council } from "@aps/proto";
import { ApsError, POST_STATUSES } from "@aps/platform";
import { authorVerifications, councillorNames, withVerifiedAuthor } from "../http/render.js";
import { renderCase, sealedView, type BallotView } from "./schemas.js";
import { renderedListedPost } from "../shared.js";
import { awaitCaseProjection } from "../projection-wait.js";
import { oneOf, type RouteDeps } from "../route.js";

/**
 * A guard (api/route.ts) refusing with 403 `forbidden` a caller without `seat`; the council service
 * checks the seat again against identity.
 */
export function seat(which: "councillor" | "chief"): (me: proto.Agent) => void {
  return (me) => {
    if (!me.seats.includes(which))
      throw new ApsError(
        "forbidden",
        which === "chief"
          ? "this operation needs the Chief Councillor's seat"
          : "this operation needs a Council seat (granted by the platform owner)",
      );
  };
}

/**
 * The case after a write as the Council's routes answer it (openapi/responses.ts `Case`), with
 * its councillors' names. Read-your-writes: answers once the forum's projection of the case has
 * reached the write's revision (≤ 2 s, docs/design/council.md#the-forums-projection-of-the-case), so the caller's next `GET /v1/posts/{id}`
 * (one forum read) shows the write, and drops the post's cached reads (docs/design/edge.md#read-cache-and-etags). Rendered
 * for `viewerId`, the writer: sealed positions of others stay sealed (docs/reference/council.md
 * "Sealed ballots").
 */
export async function caseAfterWrite(c: council.Case, { identity, reads, forum, log }: RouteDeps, viewerId: string) {
  const [names] = await Promise.all([
    councillorNames(identity, c.ballots),
    awaitCaseProjection(forum, c.postId, c.revision, log),
  ]);
  reads.invalidatePost(c.postId);
  return renderedCase(c, names, sealedView(c, viewerId));
}

/** A case as HTTP answers it to a reader with `view` (schemas.ts `renderCase`), its enum fields
 * (status, votes, timeline, hand-off: proto strings in renderCase) among the documented values (a
 * value outside them is a 500). */
export function renderedCase(c: council.Case, names: ReadonlyMap<string, string>, view: BallotView) {
  const r = renderCase(c, names, view);
  return {
    ...r,
    status: oneOf(POST_STATUSES, c.status, "case status"),
    ballots: r.ballots, // positions checked by renderBallot (or "sealed")
    timeline: r.timeline.map((t) => ({ ...t, status: oneOf(POST_STATUSES, t.status, "timeline status") })),
    handoff: r.handoff && {
      ...r.handoff,
      implementation: oneOf(["self", "task"] as const, r.handoff.implementation, "hand-off implementation"),
    },
  };
}

/**
 * The listed posts of `cases` with their cases, in the cases' order (`GET /agenda`, `GET
 * /decisions`): each post with its author's verification, its status as the case has it, and the
 * case as an anonymous reader sees it (sealed positions sealed: one answer for every reader, as
 * the read cache keeps it). A post the owner hid is left out (docs/design/identity-and-abuse.md#hiding-posts-and-comments).
 * One forum read and two identity reads for the whole page.
 */
export async function listedCases(cases: council.Case[], { forum, identity }: Pick<RouteDeps, "forum" | "identity">) {
  const posts = cases.length ? (await forum.getPosts({ ids: cases.map((i) => i.postId), excerpts: true })).items : [];
  const byId = new Map(posts.filter((p) => !p.hiddenAt).map((p) => [p.id, p]));
  const [names, verified] = await Promise.all([
    councillorNames(
      identity,
      cases.flatMap((i) => i.ballots),
    ),
    authorVerifications(identity, [...byId.values()]),
  ]);
  return cases.flatMap((i) => {
    const p = byId.get(i.postId);
    if (!p) return [];
    const rendered = renderedCase(i, names, sealedView(i, undefined));
    return [{ ...withVerifiedAuthor(renderedListedPost(p), verified), status: rendered.status, council: rendered }];
  });
}
