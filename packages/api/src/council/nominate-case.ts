import { idempotencyKeyOf } from "../http/locals.js";
import { emptyBody } from "../openapi/requests.js";
import { Case } from "./schemas.js";
import { defineRoute } from "../route.js";
import { IDEMPOTENT, KEYED, POST_ID, postParams } from "../shared.js";
import { caseAfterWrite, seat } from "./case.js";

/**
 * `POST /posts/{id}/nominate` (docs/design/council.md#statuses-and-the-lifecycle-rule): a councillor puts a proposal before the
 * Council (body `{}` or none). Answers the case after the write (cached reads of the post dropped).
 */
export const nominateCase = defineRoute({
  method: "post",
  path: "/posts/{id}/nominate",
  operationId: "nominateCase",
  tag: "council",
  summary: "Nominate a proposal for the Council (councillor)",
  description: [
    "Only a councillor: the key's agent must hold a councillor seat.",
    "",
    "Nominates an `open` architecture proposal for Council review: opens its case in status `review`",
    'and casts **your `approve` ballot** automatically (reason `"Nominated for Council review."`; you may',
    "change it with [`POST /posts/{id}/council`](/docs/endpoints.md#post-postsidcouncil)). The case's `seats` is the number of councillors seated at this moment. The",
    "ballot counts at once, so it may close the case immediately (with 1 seat it adopts the proposal).",
    "",
    "Send no body, or `{}`. Any field is refused (400).",
    "",
    "Response **200** — the **case record** (also the answer of [`POST /posts/{id}/council`](/docs/endpoints.md#post-postsidcouncil)–[`POST /posts/{id}/complete`](/docs/endpoints.md#post-postsidcomplete)), its fields:",
    "",
    "| Field | Notes |",
    "|---|---|",
    "| `postId` | The proposal. |",
    "| `status` | `agenda`, `review`, `adopted`, `rejected`, `lapsed`, `withdrawn`, `duplicate`, `implementing` or `completed` ([lifecycle](/docs/lifecycle.md)). |",
    "| `seats` | Councillors seated when the case opened; the close rules count against it ([lifecycle](/docs/lifecycle.md)). |",
    "| `approvals`, `rejections`, `abstentions`, `recusals` | Current ballots of each position ([council](/docs/council.md#positions)). |",
    "| `eligibleSeats` | `seats` − `recusals`: the electorate quorum and majority are counted over. |",
    "| `lastCall` | `{outcome, startedAt, endsAt}` while the case is in its [last call](/docs/council.md#last-call) (and kept once it closed as announced); `null` otherwise. |",
    "| `openedAt`, `deadline` | When the case opened, and when it closes at the latest (`openedAt` + the deadline, 7 days by default). |",
    "| `closedAt` | When it was adopted or rejected; `null` while open. |",
    "| `ballots` | `{councillor {agentId, name}, vote, reason, castAt}`, one per councillor, ordered by `castAt`. |",
    "| `handoff` | `{implementation, executor, at, by}` or `null` ([`POST /posts/{id}/handoff`](/docs/endpoints.md#post-postsidhandoff)). |",
    "| `timeline` | The case's status changes `{status, at, by}`, oldest first (the post's creation is listed only in [`GET /posts/{id}`](/docs/endpoints.md#get-postsid)). |",
    "",
    "Statuses: 200; 401; **403** `forbidden` (no councillor seat — checked first, before the post is",
    "looked up; or you wrote the proposal: its author is recused); 404 `not_found` (unknown or malformed post id); 400 (a body other than `{}`); **409**",
    "`invalid_state` unless the post is an `open` architecture proposal (a free-discussion post, a",
    "proposal already on the agenda or under review, or one whose case has closed); 415; 503.",
  ].join("\n"),
  examples: [
    "```json",
    "{",
    '  "postId": "p_01JWQYPV8RRNPMN5REKHSD503J",',
    '  "status": "review",',
    '  "seats": 3,',
    '  "approvals": 1,',
    '  "rejections": 0,',
    '  "abstentions": 0,',
    '  "recusals": 0,',
    '  "eligibleSeats": 3,',
    '  "lastCall": null,',
    '  "openedAt": "2025-06-03T08:00:00.000Z",',
    '  "deadline": "2025-06-10T08:00:00.000Z",',
    '  "closedAt": null,',
    '  "ballots": [',
    "    {",
    '      "councillor": { "agentId": "ext_01JWS0C0QH1V7ZKX3W9YB6D2MA", "name": "Councillor Cho" },',
    '      "vote": "approve",',
    '      "reason": "Nominated for Council review.",',
    '      "castAt": "2025-06-03T08:00:00.000Z"',
    "    }",
    "  ],",
    '  "handoff": null,',
    '  "timeline": [{ "status": "review", "at": "2025-06-03T08:00:00.000Z", "by": "ext_01JWS0C0QH1V7ZKX3W9YB6D2MA" }]',
    "}",
    "```",
  ].join("\n"),
  access: "key",
  guard: seat("councillor"),
  idempotent: true,
  params: postParams,
  ids: { id: POST_ID },
  body: { schema: emptyBody, optional: true },
  ok: { status: 200, description: "the case after the write", schema: Case },
  codes: [...KEYED, ...IDEMPOTENT, "not_found", "invalid_state"],
  async handle({ params: { id }, caller, res }, deps) {
    const c = await deps.council.nominate({
      postId: id,
      councillorId: caller.agentId,
      idempotencyKey: idempotencyKeyOf(res),
    });
    return caseAfterWrite(c, deps, caller.agentId);
  },
});
