import MarkdownIt from "markdown-it";

/**
 * Proposal templates (docs/reference/proposing.md "Templates", docs/design/votes-and-heat.md#proposal-templates):
 * the sections an architecture proposal is read by — the KEP/MADR headings the Council and the
 * decision record (`GET /decisions/{id}.md`) expect. A section is present when the body has a
 * Markdown heading (any level) naming it or one of its aliases, followed by some text before the
 * next heading of the same or a higher level.
 */
export interface TemplateSection {
  /** The stable name an answer uses (`missingSections`), lower-case. */
  id: string;
  /** The heading the template writes. */
  heading: string;
  /** Other headings that count as this section (compared case-insensitively, as a heading's first words). */
  aliases: readonly string[];
  /** What the section answers, for the author. */
  guidance: string;
}

/** A proposal template: its name, the kind of post it applies to and its sections in order. */
export interface ProposalTemplate {
  name: string;
  title: string;
  /** `arch`: architecture proposals (`is_arch_design: true`). */
  appliesTo: "arch";
  sections: readonly TemplateSection[];
}

/** The architecture proposal template: context, proposal, alternatives, risks, rollout, observability. */
export const ARCHITECTURE_TEMPLATE: ProposalTemplate = {
  name: "architecture",
  title: "Architecture proposal",
  appliesTo: "arch",
  sections: [
    {
      id: "context",
      heading: "Context",
      aliases: ["background", "motivation", "problem", "abstract", "summary"],
      guidance: "What is the situation today, and what problem or need does the proposal answer?",
    },
    {
      id: "proposal",
      heading: "Proposal",
      aliases: ["decision", "specification", "design", "solution"],
      guidance: "What exactly to add, change or remove on the platform: one decision, concretely.",
    },
    {
      id: "alternatives",
      heading: "Alternatives",
      aliases: ["considered options", "options considered", "options", "rejected ideas", "rejected alternatives"],
      guidance: "Which other options were considered (doing nothing included), and why this one.",
    },
    {
      id: "risks",
      heading: "Risks",
      aliases: ["drawbacks", "security implications", "consequences", "trade-offs", "tradeoffs"],
      guidance: "What could go wrong, who bears the cost, and how the risk is reduced.",
    },
    {
      id: "rollout",
      heading: "Rollout",
      aliases: ["migration", "deployment", "backwards compatibility", "backward compatibility"],
      guidance: "How it is introduced and, if needed, undone: stages, migration, compatibility.",
    },
    {
      id: "observability",
      heading: "Observability",
      aliases: ["monitoring", "metrics", "success criteria", "how to measure", "validation"],
      guidance: "How the platform will know it works: signals, dashboards, alerts, a review date.",
    },
  ],
};

/** Every template `GET /templates` serves, by name. */
export const PROPOSAL_TEMPLATES: ReadonlyMap<string, ProposalTemplate> = new Map([
  [ARCHITECTURE_TEMPLATE.name, ARCHITECTURE_TEMPLATE],
]);

/** The template names, for request schemas. */
export const TEMPLATE_NAMES = [ARCHITECTURE_TEMPLATE.name] as const;

/**
 * `PROPOSAL_TEMPLATE` (gateway): `advisory` answers a proposal's missing sections and creates it;
 * `required` refuses an architecture proposal or an edit of one that lacks a section (422
 * `missing_sections`). docs/reference/proposing.md "Templates".
 */
export type TemplateEnforcement = "advisory" | "required";

/** The template as a Markdown skeleton an author fills in: each heading (`## …`) with its guidance as a comment. */
export function templateMarkdown(t: ProposalTemplate): string {
  return t.sections.map((s) => `## ${s.heading}\n\n<!-- ${s.guidance} -->\n`).join("\n");
}

// html off, so raw HTML stays text (the page renders it sanitised elsewhere); only headings are read
const md = new MarkdownIt({ html: false });

/** A heading's text as compared: lower-case, no leading numbering ("2.", "II."), no trailing colon, single spaces. */
function normalise(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/^\s*(?:[0-9]+|[ivx]+)[.)]?\s+/, "")
    .replace(/[:.\s]+$/, "")
    .replace(/\s+/g, " ")
    .trim();
}

/** Whether `heading` (normalised) names `name`: equal, or `name` followed by a non-letter ("Risks and mitigations"). */
function names(heading: string, name: string): boolean {
  return heading === name || (heading.startsWith(name) && !/\p{L}/u.test(heading.charAt(name.length)));
}

/** A paragraph that holds nothing but HTML comments (the skeleton's guidance): not yet written. */
function commentOnly(t: { type: string }, next: { content: string } | undefined): boolean {
  return t.type === "paragraph_open" && /^\s*(?:<!--[\s\S]*?-->\s*)+$/.test(next?.content ?? "");
}

/**
 * The ids of the sections of `template` that `body` (Markdown) lacks, in the template's order;
 * `[]` when every one is there. A heading counts when some text (a paragraph, list, code block,
 * table or quote; not a lone HTML comment) follows it before the next heading of the same or a higher level. Pure; parses
 * the body once with markdown-it (a 40 000-character body takes about a millisecond).
 */
export function missingSections(template: ProposalTemplate, body: string): string[] {
  const tokens = md.parse(body, {});
  const filled = new Set<string>();
  let open: { ids: string[]; level: number; content: boolean } | undefined;
  const close = (): void => {
    if (open?.content) for (const id of open.ids) filled.add(id);
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.type === "heading_open") {
      const level = Number(t.tag.slice(1));
      if (open && level <= open.level) {
        close();
        open = undefined;
      }
      const text = normalise(tokens[i + 1]?.content ?? "");
      const ids = template.sections
        .filter(
          (s) => names(text, s.id) || names(text, s.heading.toLowerCase()) || s.aliases.some((a) => names(text, a)),
        )
        .map((s) => s.id);
      if (ids.length > 0) {
        close();
        open = { ids, level, content: false };
      }
      i += 2; // inline, heading_close
    } else if (
      open &&
      t.level === 0 &&
      t.type !== "hr" &&
      !t.type.endsWith("_close") &&
      !commentOnly(t, tokens[i + 1])
    ) {
      open.content = true;
    }
  }
  close();
  return template.sections.filter((s) => !filled.has(s.id)).map((s) => s.id);
}
