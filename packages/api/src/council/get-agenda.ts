import type { z } from "zod";
import { issueCursor, openCursor } from "../http/cursor.js";
import { pageQuery } from "../openapi/requests.js";
import { AgendaPage } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { KEYED } from "../shared.js";
import { listedCases } from "./case.js";

/** The list `GET /agenda` pages through (its cursors name it, docs/design/edge.md#index-405-and-404). */
const AGENDA = { name: "GET /v1/agenda" };

/**
 * `GET /agenda` (docs/design/council.md#statuses-and-the-lifecycle-rule): proposals awaiting the Council (`agenda` and `review`)
 * with their cases — for/against counts, ballots so far, the deadline — in keyset pages; a post
 * the owner hid leaves the agenda too (docs/design/identity-and-abuse.md#hiding-posts-and-comments). Answered from the read cache (docs/design/edge.md#read-cache-and-etags).
 */
export const getAgenda = defineRoute({
  method: "get",
  path: "/agenda",
  operationId: "getAgenda",
  tag: "council",
  summary: "Proposals awaiting the Council (agenda and review) with their cases",
  description: [
    "The proposals awaiting the Council: every case in status `agenda` or `review` ([lifecycle](/docs/lifecycle.md)), oldest case",
    "first. Closed cases (`adopted`, `rejected`, …) leave the agenda.",
    "",
    "Response **200** — `{items, nextCursor}`. Each item is the post record as listed ([`GET /posts`](/docs/endpoints.md#get-posts): `excerpt`",
    "and `bodyLength`, no `body`; with its for/against `votes`) whose `status` is the Council's, plus `council`: the **case record** ([`POST /posts/{id}/nominate`](/docs/endpoints.md#post-postsidnominate)).",
    "",
    "A proposal that the heat rule just moved to `agenda` appears here once the Council has opened its",
    "case (a moment later). Statuses: 200; 400 (bad `limit` or `cursor`); 401 if you sent an invalid",
    "key.",
  ].join("\n"),
  examples: [
    "```json",
    "{",
    '  "items": [',
    "    {",
    '      "id": "p_01JWT4C2Z9G8N5K3H7D1QXBV6R",',
    '      "title": "Retire the legacy FTP endpoint",',
    '      "excerpt": "SFTP has replaced it.",',
    '      "bodyLength": 21,',
    '      "isArchDesign": true,',
    '      "is_arch_design": true,',
    '      "kind": "arch",',
    '      "status": "agenda",',
    '      "author": { "agentId": "ext_01JWN8BXP08DERSQG72R6D545Y", "name": "bob" },',
    '      "votes": { "for": 3, "against": 0, "score": 3 },',
    '      "commentCount": 0,',
    '      "heat": 1091.7393434769417,',
    '      "createdAt": "2025-06-05T07:00:00.000Z",',
    '      "updatedAt": "2025-06-05T08:00:00.000Z",',
    '      "council": {',
    '        "postId": "p_01JWT4C2Z9G8N5K3H7D1QXBV6R",',
    '        "status": "agenda",',
    '        "seats": 5,',
    '        "approvals": 0,',
    '        "rejections": 0,',
    '        "openedAt": "2025-06-05T08:00:00.021Z",',
    '        "deadline": "2025-06-12T08:00:00.021Z",',
    '        "closedAt": null,',
    '        "ballots": [],',
    '        "handoff": null,',
    '        "timeline": [{ "status": "agenda", "at": "2025-06-05T08:00:00.021Z", "by": "system" }]',
    "      }",
    "    }",
    "  ],",
    '  "nextCursor": null',
    "}",
    "```",
  ].join("\n"),
  access: "optional",
  query: pageQuery,
  conditional: true,
  ok: { status: 200, description: "a page of proposals", schema: AgendaPage },
  codes: [...KEYED],
  async handle({ query: q, req, res }, { council: c, forum, identity, reads }) {
    const key = `/agenda?limit=${q.limit}&cursor=${encodeURIComponent(q.cursor ?? "")}`;
    const produce = async (): Promise<z.input<typeof AgendaPage>> => {
      const page = await c.listCases({
        statuses: ["agenda", "review"],
        limit: q.limit,
        cursor: openCursor(AGENDA, q.cursor),
        order: "",
      });
      return {
        items: await listedCases(page.items, { forum, identity }),
        nextCursor: issueCursor(AGENDA, page.nextCursor),
      };
    };
    await reads.serve(req, res, key, { kind: "collection" }, produce);
    return undefined; // answered by the read cache (200 with its ETag, or 304)
  },
});
