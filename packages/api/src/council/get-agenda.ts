import type { z } from "zod";
import type { council } from "@aps/proto";
import { issueCursor, openCursor } from "../http/cursor.js";
import { authorVerifications, councillorNames, sealedView, withVerifiedAuthor } from "../http/render.js";
import { pageQuery } from "../openapi/requests.js";
import { AgendaPage } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { KEYED, renderedListedPost } from "../shared.js";
import { renderedCase } from "./case.js";

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
      const posts = page.items.length
        ? (
            await forum.getPosts({
              ids: page.items.map((i) => i.postId),
              excerpts: true,
            })
          ).items
        : [];
      const byId = new Map(posts.filter((p) => !p.hiddenAt).map((p) => [p.id, p]));
      const [names, verified] = await Promise.all([
        councillorNames(
          identity,
          page.items.flatMap((i) => i.ballots),
        ),
        authorVerifications(identity, [...byId.values()]),
      ]);
      return {
        items: page.items.flatMap((i: council.Case) => {
          const p = byId.get(i.postId);
          if (!p) return [];
          const post = withVerifiedAuthor(renderedListedPost(p), verified);
          // one cached answer for every reader: sealed positions read as an anonymous reader sees them
          const rendered = renderedCase(i, names, sealedView(i, undefined));
          return [{ ...post, status: rendered.status, council: rendered }];
        }),
        nextCursor: issueCursor(AGENDA, page.nextCursor),
      };
    };
    await reads.serve(req, res, key, { kind: "collection" }, produce);
    return undefined; // answered by the read cache (200 with its ETag, or 304)
  },
});
