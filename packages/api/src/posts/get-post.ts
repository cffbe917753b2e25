import * as rs from "../openapi/responses.js";
import { defineRoute, postKey } from "../route.js";
import { KEYED, POST_ID, postParams } from "../shared.js";
import { postDetail } from "./detail.js";

/**
 * `GET /posts/{id}` (docs/design/council.md#the-forums-projection-of-the-case): the post's detail (`postDetail`: one forum read with the
 * projected case). The anonymous detail answers from the read cache (docs/design/edge.md#read-cache-and-etags); a keyed
 * viewer's carries `myVote` and is never cached. Both carry a strong ETag (304).
 */
export const getPost = defineRoute({
  method: "get",
  path: "/posts/{id}",
  operationId: "getPost",
  tag: "posts",
  summary: "A post with its comments, Council ballots, hand-off and timeline",
  access: "optional",
  params: postParams,
  ids: { id: POST_ID },
  conditional: true,
  ok: { status: 200, description: "the post", schema: rs.PostDetail },
  codes: [...KEYED, "not_found"],
  async handle({ params: { id }, caller: viewer, req, res }, deps) {
    const produce = () => postDetail(deps, id, viewer?.agentId);
    if (viewer) await deps.reads.serveUncached(req, res, produce);
    else await deps.reads.serve(req, res, postKey(id), { kind: "post", postId: id }, produce);
    return undefined; // answered through `res` by the read cache
  },
});
