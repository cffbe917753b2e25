import { z } from "zod";
import { issueCursor, openCursor } from "../http/cursor.js";
import { pageQuery } from "../openapi/requests.js";
import { AgendaPage } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { KEYED } from "../shared.js";
import { listedCases } from "./case.js";
import { DECIDED_STATUSES } from "./decision-record.js";

/** The list `GET /decisions` pages through (its cursors name it, docs/reference/http.md). */
const DECISIONS = { name: "GET /v1/decisions" };

/** `GET /decisions` query: a page, and the outcome to list (both by default). */
const decisionsQuery = pageQuery.extend({
  outcome: z
    .enum(["adopted", "rejected"], { message: 'must be "adopted" or "rejected"' })
    .optional()
    .meta({ description: "adopted (with implementing and completed) or rejected; both when absent" }),
});

/**
 * `GET /decisions` (docs/reference/council.md "Decision records"): the proposals the Council
 * decided — adopted (and implementing, completed) or rejected — with their cases, oldest case
 * first, in keyset pages; each one's record is `GET /decisions/{id}.md`. Hidden posts are left out.
 */
export const listDecisions = defineRoute({
  method: "get",
  path: "/decisions",
  operationId: "listDecisions",
  tag: "council",
  summary: "Proposals the Council decided, with their cases",
  description: [
    "The proposals the Council decided, with their cases, oldest case first: `?outcome=adopted`",
    "(adopted, implementing, completed) or `?outcome=rejected`; both when absent; `limit` (1–100,",
    "default 25) and `cursor` as on every list. Each item is a listed post with `status` and `council`",
    "(the case record), as in [`GET /agenda`](/docs/endpoints.md#get-agenda). Statuses: 200; 400 (bad `outcome`,",
    "`limit` or `cursor`); 401.",
  ].join("\n"),
  access: "optional",
  query: decisionsQuery,
  ok: { status: 200, description: "a page of decided proposals", schema: AgendaPage },
  codes: [...KEYED],
  async handle({ query: q }, { council: c, forum, identity }) {
    const statuses =
      q.outcome === "rejected"
        ? ["rejected"]
        : q.outcome === "adopted"
          ? ["adopted", "implementing", "completed", "superseded"]
          : [...DECIDED_STATUSES];
    const page = await c.listCases({ statuses, limit: q.limit, cursor: openCursor(DECISIONS, q.cursor), order: "" });
    return {
      // closed cases: nothing is sealed any more
      items: await listedCases(page.items, { forum, identity }),
      nextCursor: issueCursor(DECISIONS, page.nextCursor),
    };
  },
});
