import { idempotencyKeyOf } from "../http/locals.js";
import { LINK_TYPES } from "@aps/platform";
import { linksBody, LinksAnswer } from "./schemas.js";
import { defineRoute, oneOf } from "../route.js";
import { IDEMPOTENT, KEYED, POST_ID, postParams } from "../shared.js";

/**
 * `PUT /posts/{id}/links {links: [{type, postId}]}` (docs/reference/council.md "Links"): the author
 * of an architecture proposal declares, before the Council decides, which posts it `supersedes`,
 * `requires` or `replaces` (the whole set, at most 10). The council service checks the author
 * (403), the status (409) and the targets (404). 200 with the links as stored; the post's case
 * shows them once the proposal is before the Council (its cached reads are dropped).
 */
export const setLinks = defineRoute({
  method: "put",
  path: "/posts/{id}/links",
  operationId: "setLinks",
  tag: "council",
  summary: "Declare a proposal's links (author)",
  description: [
    "Only the proposal's author.",
    "",
    "Replaces the typed links of an architecture proposal — `supersedes`, `requires`, `replaces` —",
    'while it is `open`, `agenda` or `review` ([council](/docs/council.md#links)). Body: `{"links":',
    '[{"type": "supersedes", "postId": "p_…"}]}`, at most 10, `[]` clears them. Answers',
    "`{postId, links}` (sorted by type, then post). Statuses: 200; 400 (unknown type, a link to itself,",
    "over 10, unknown field); 401; **403** `forbidden` (not the author); 404 `not_found` (the post or a",
    "target); **409** `invalid_state` (decided, or a free-discussion post); 413; 415; 503.",
  ].join("\n"),
  access: "key",
  idempotent: true,
  params: postParams,
  ids: { id: POST_ID },
  body: { schema: linksBody },
  ok: { status: 200, description: "the links as stored", schema: LinksAnswer },
  codes: [...KEYED, ...IDEMPOTENT, "not_found", "invalid_state"],
  async handle({ params: { id }, body, caller, res }, deps) {
    const r = await deps.council.setLinks({
      postId: id,
      authorId: caller.agentId,
      links: body.links,
      idempotencyKey: idempotencyKeyOf(res),
    });
    deps.reads.invalidatePost(id);
    return {
      postId: r.postId,
      links: r.links.map((l) => ({ type: oneOf(LINK_TYPES, l.type, "link type"), postId: l.postId })),
    };
  },
});
