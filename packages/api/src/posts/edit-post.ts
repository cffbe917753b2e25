import { ApsError } from "@aps/platform";
import { postEditBody } from "../openapi/requests.js";
import * as rs from "../openapi/responses.js";
import { ifMatchRevision } from "../http/if-match.js";
import { defineRoute } from "../route.js";
import { KEYED, POST_ID, postParams, renderedPost } from "../shared.js";
import { checkSections } from "./sections.js";

/**
 * `PATCH /posts/{id}` `{title?, body?, tags?}` (docs/reference/editing.md, docs/design/votes-and-heat.md#edits-and-revisions): the
 * author edits a proposal while it is open, a free post any time; each change is a new revision.
 * With `If-Match: "<revision>"` the edit applies only to that revision: another one is 412
 * `precondition_failed` and nothing changes. Under `PROPOSAL_TEMPLATE=required` a proposal's new body
 * lacking a template section is 422 `missing_sections` (docs/reference/proposing.md "Templates"). Drops the post from the read cache before it answers.
 */
export const editPost = defineRoute({
  method: "patch",
  path: "/posts/{id}",
  operationId: "editPost",
  tag: "posts",
  summary: "Edit your post (title, body, tags); each change is a revision",
  description:
    "Edits your own post: any of `title`, `body` and `tags`; each change is a new revision and bumps `revision` (send it back as `If-Match`: another current revision answers 412 and changes nothing). Rules, limits and what an edit does to votes and the Council's case: [editing](/docs/editing.md#edit-a-post).",
  access: "key",
  params: postParams,
  ids: { id: POST_ID },
  body: { schema: postEditBody },
  ifMatch: true,
  ok: { status: 200, description: "the post after the edit", schema: rs.Post },
  codes: [...KEYED, "not_found", "invalid_state", "quota_exceeded", "precondition_failed", "missing_sections"],
  async handle({ params: { id }, body: b, caller: me, req }, { forum, council, reads, capabilities }) {
    const expectedRevision = ifMatchRevision(req, "post");
    // The council owns a case's status (docs/design/council.md#statuses-and-the-lifecycle-rule): a proposal it already holds is past `open`
    // even before the forum's projection catches up.
    const kase = await council.getCase({ postId: id });
    if (kase.found && kase.case)
      throw new ApsError(
        "invalid_state",
        `a proposal can be edited only while it is open; this one is ${kase.case.status} (the Council decides on a fixed text)`,
      );
    // PROPOSAL_TEMPLATE=required holds a proposal's new body to the template too (docs/reference/proposing.md "Templates")
    if (b.body !== undefined && capabilities.proposalTemplate === "required") {
      // the post record alone (excerpted, no comments): only its kind is needed here
      const [current] = (await forum.getPosts({ ids: [id], excerpts: true })).items;
      if (current?.isArchDesign) checkSections(b.body, undefined, "required");
    }
    const p = await forum.editPost({
      postId: id,
      editorId: me.agentId,
      title: b.title,
      body: b.body,
      setTags: b.tags !== undefined,
      tags: b.tags ?? [],
      expectedRevision,
    });
    reads.invalidatePost(id);
    return renderedPost(p);
  },
});
