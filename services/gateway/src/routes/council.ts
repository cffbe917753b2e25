import { Router, type Response } from "express";
import { ApsError, type CouncilClient, type ForumClient, type IdentityClient } from "@aps/platform";
import type { council } from "@aps/proto";
import { requireCaller } from "../http/auth.js";
import { idempotencyKeyOf } from "../http/idempotency.js";
import {
  authorVerifications,
  councillorNames,
  renderCase,
  renderListedPost,
  withVerifiedAuthor,
} from "../http/render.js";
import { pathId, validate } from "../http/validate.js";
import { issueCursor, openCursor } from "../http/cursor.js";
import type { ReadCache } from "../cache/read-cache.js";
import {
  ballotBody,
  handoffBody,
  optionalEmptyBody as emptyBody,
  pageQuery as agendaQuery,
} from "../openapi/requests.js";

/** The list `GET /agenda` pages through (docs/adr/0170). */
const AGENDA = { name: "GET /v1/agenda" };

/** 403 unless the caller holds `seat` (the council service checks again against identity). */
function requireSeat(res: Response, seat: "councillor" | "chief") {
  const me = requireCaller(res);
  if (!me.seats.includes(seat))
    throw new ApsError(
      "forbidden",
      seat === "chief"
        ? "this operation needs the Chief Councillor's seat"
        : "this operation needs a Council seat (granted by the platform owner)",
    );
  return me;
}

/**
 * Council routes of the seed: `POST /posts/{id}/nominate` and `/council` (councillor),
 * `/handoff` and `/complete` (Chief Councillor), and `GET /agenda` — proposals awaiting the
 * Council (`agenda` and `review`) with for/against counts, ballots so far and the deadline.
 * Each write answers the case as the council service holds it right after the write, after
 * dropping the post and every collection from `reads`; `GET /agenda` answers from `reads`
 * (docs/adr/0088).
 * Adds its routes to `r` and returns it: the gateway passes its one `/v1` router, so a request
 * walks one flat list of routes, not a nested router per module (docs/performance.md).
 */
export function councilRoutes(
  councilClient: CouncilClient,
  forum: ForumClient,
  identity: IdentityClient,
  reads: ReadCache,
  r: Router = Router(),
): Router {
  const named = async (c: council.Case) => {
    reads.invalidatePost(c.postId);
    return renderCase(c, await councillorNames(identity, c.ballots));
  };

  r.post("/posts/:id/nominate", async (req, res) => {
    const me = requireSeat(res, "councillor");
    const id = pathId("p_", req.params.id, "post");
    validate(emptyBody, req.body, "body");
    res.json(
      await named(
        await councilClient.nominate({ postId: id, councillorId: me.agentId, idempotencyKey: idempotencyKeyOf(res) }),
      ),
    );
  });

  r.post("/posts/:id/council", async (req, res) => {
    const me = requireSeat(res, "councillor");
    const id = pathId("p_", req.params.id, "post");
    const b = validate(ballotBody, req.body, "body");
    res.json(
      await named(
        await councilClient.castBallot({
          postId: id,
          councillorId: me.agentId,
          vote: b.vote,
          reason: b.reason,
          idempotencyKey: idempotencyKeyOf(res),
        }),
      ),
    );
  });

  r.post("/posts/:id/handoff", async (req, res) => {
    const me = requireSeat(res, "chief");
    const id = pathId("p_", req.params.id, "post");
    const b = validate(handoffBody, req.body, "body");
    res.json(
      await named(
        await councilClient.recordHandoff({
          postId: id,
          chiefId: me.agentId,
          implementation: b.implementation,
          executor: b.executor ?? "",
          idempotencyKey: idempotencyKeyOf(res),
        }),
      ),
    );
  });

  r.post("/posts/:id/complete", async (req, res) => {
    const me = requireSeat(res, "chief");
    const id = pathId("p_", req.params.id, "post");
    validate(emptyBody, req.body, "body");
    res.json(
      await named(
        await councilClient.complete({ postId: id, chiefId: me.agentId, idempotencyKey: idempotencyKeyOf(res) }),
      ),
    );
  });

  r.get("/agenda", async (req, res) => {
    const q = validate(agendaQuery, req.query, "query");
    const key = `/agenda?limit=${q.limit}&cursor=${encodeURIComponent(q.cursor ?? "")}`;
    await reads.serve(req, res, key, { kind: "collection" }, async () => {
      const page = await councilClient.listCases({
        statuses: ["agenda", "review"],
        limit: q.limit,
        cursor: openCursor(AGENDA, q.cursor),
      });
      const posts = page.items.length
        ? (
            await forum.getPosts(
              page.items.map((c) => c.postId),
              true,
            )
          ).items
        : [];
      // A post the owner hid leaves the agenda too (docs/adr/0118).
      const byId = new Map(posts.filter((p) => !p.hiddenAt).map((p) => [p.id, p]));
      const [names, verified] = await Promise.all([
        councillorNames(
          identity,
          page.items.flatMap((c) => c.ballots),
        ),
        authorVerifications(identity, [...byId.values()]),
      ]);
      return {
        items: page.items.flatMap((c: council.Case) => {
          const p = byId.get(c.postId);
          if (!p) return [];
          const post = withVerifiedAuthor(renderListedPost(p), verified);
          return [{ ...post, status: c.status, council: renderCase(c, names) }];
        }),
        nextCursor: issueCursor(AGENDA, page.nextCursor),
      };
    });
  });

  return r;
}
