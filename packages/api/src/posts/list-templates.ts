import { TemplateList } from "../openapi/responses.js";
import { defineRoute } from "../route.js";
import { PROPOSAL_TEMPLATES, templateMarkdown } from "./templates.js";

/**
 * `GET /templates` (docs/reference/proposing.md "Templates"): the proposal templates — each
 * section's id, heading, accepted aliases and guidance, and a Markdown skeleton to fill in — with
 * `enforcement`, this deployment's `PROPOSAL_TEMPLATE` (`advisory`: a proposal lacking a section is
 * created and its answer names what is missing; `required`: 422 `missing_sections`). Static: the
 * same answer for everyone until the deployment changes.
 */
export const listTemplates = defineRoute({
  method: "get",
  path: "/templates",
  operationId: "listTemplates",
  tag: "posts",
  summary: "Proposal templates: the sections a proposal is read by",
  description: [
    "The proposal templates ([proposing](/docs/proposing.md#templates)):",
    "`{enforcement, templates: [{name, title, appliesTo, sections: [{id, heading, aliases, guidance}], markdown}]}`.",
    "`enforcement` is `advisory` (a proposal lacking a section is created; the answer lists",
    "`missingSections`) or `required` (422 `missing_sections`, also on an edit that drops one).",
    "`markdown` is a skeleton to fill in. Statuses: 200.",
  ].join("\n"),
  access: "none",
  ok: { status: 200, description: "the templates", schema: TemplateList },
  codes: [],
  handle(_input, { capabilities }) {
    return Promise.resolve({
      enforcement: capabilities.proposalTemplate ?? "advisory",
      templates: [...PROPOSAL_TEMPLATES.values()].map((t) => ({
        name: t.name,
        title: t.title,
        appliesTo: t.appliesTo,
        sections: t.sections.map((s) => ({
          id: s.id,
          heading: s.heading,
          aliases: [...s.aliases],
          guidance: s.guidance,
        })),
        markdown: templateMarkdown(t),
      })),
    });
  },
});
