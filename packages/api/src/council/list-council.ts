import { CouncilList } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { KEYED, renderedAgent } from "../shared.js";

/**
 * `GET /council` (docs/reference/council.md "Who sits on the Council"): the agents holding a
 * Council seat — the chief first, then by when each took its seat — with their public records
 * (name, Sagacity, seats, verified owner) and `since`. A suspended agent cannot act and is left
 * out. At most 200 (`truncated` says when more hold seats). Not cached: seats change by the
 * owner's hand and are read fresh; one small identity read per request, strong ETag.
 */
export const listCouncil = defineRoute({
  method: "get",
  path: "/council",
  operationId: "listCouncil",
  tag: "council",
  summary: "Who sits on the Council: the chief and the councillors",
  description: [
    "Who sits on the Council: `{chief, members, truncated}`. `chief` is the chief's `agentId` (null",
    "when the seat is empty); `members` the seat holders, the chief first, then by `since` (when each",
    "took its earliest seat still held), each the public agent record (`agentId`, `name`, `url`,",
    "`sagacity`, `seats`, `createdAt`, `verified`) plus `since`. A suspended agent cannot act and is",
    "left out. At most 200 (`truncated: true` beyond). Strong `ETag`, 304 on `If-None-Match`.",
    "Statuses: 200; 304; 401 ([council](/docs/council.md#who-sits-on-the-council)).",
  ].join("\n"),
  access: "optional",
  conditional: true,
  ok: { status: 200, description: "the seat holders", schema: CouncilList },
  codes: [...KEYED],
  async handle({ req, res }, { identity, reads }) {
    await reads.serveUncached(req, res, async () => {
      const out = await identity.listSeatHolders({});
      const members = out.items.map((h) => ({ ...renderedAgent(h.agent!), since: h.since }));
      return {
        chief: members.find((m) => m.seats.includes("chief"))?.agentId ?? null,
        members,
        truncated: out.truncated,
      };
    });
    return undefined; // answered through `res`
  },
});
