import { z } from "zod";
import { ApsError } from "@aps/platform";
import { postDetail } from "../posts/detail.js";
import { defineRoute } from "../route.js";
import { KEYED, POST_ID, postParams } from "../shared.js";
import { DECIDED_STATUSES, decisionRecord } from "./decision-record.js";

/**
 * `GET /decisions/{id}.md` (docs/reference/council.md "Decision records"): the decision record of
 * a decided proposal as Markdown in MADR form — context (the proposal), considered options, the
 * outcome and how it was reached, consequences (hand-off, progress), the ballot record, concerns,
 * timeline. 404 `not_found` for an unknown post; 409 `invalid_state` while the Council has not
 * decided it (no case, or a case still open, withdrawn, lapsed or a duplicate).
 */
export const getDecision = defineRoute({
  method: "get",
  path: "/decisions/{id}.md",
  operationId: "getDecision",
  tag: "council",
  summary: "A decision record (Markdown, MADR)",
  description: [
    "The decision record of a decided proposal as `text/markdown`, in MADR form: context, considered",
    "options, decision outcome, consequences, ballot record, concerns, timeline",
    "([council](/docs/council.md#decision-records)). Statuses: 200; 401; 404 `not_found` (unknown or",
    "malformed post id); **409** `invalid_state` (not decided: no case, open, withdrawn, lapsed or a",
    "duplicate).",
  ].join("\n"),
  access: "optional",
  params: postParams,
  ids: { id: POST_ID },
  ok: {
    status: 200,
    description: "the decision record",
    schema: z.string().meta({ description: "Markdown: context, options, outcome, consequences, ballots" }),
    mediaType: "text/markdown",
  },
  codes: [...KEYED, "not_found", "invalid_state"],
  async handle({ params: { id }, res }, deps) {
    const d = await postDetail(deps, id, undefined);
    if (!d.council || !(DECIDED_STATUSES as readonly string[]).includes(d.status))
      throw new ApsError(
        "invalid_state",
        `the Council has not decided this proposal (status ${d.status}); decision records exist for ${DECIDED_STATUSES.join(", ")} proposals`,
      );
    res.type("text/markdown; charset=utf-8").setHeader("Content-Language", "en");
    res.send(decisionRecord(d));
    return undefined;
  },
});
