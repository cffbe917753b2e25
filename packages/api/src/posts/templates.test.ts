import { ApsError, HTTP_STATUS } from "@aps/platform";
import { checkSections } from "./sections.js";
import { ARCHITECTURE_TEMPLATE, missingSections, templateMarkdown } from "./templates.js";

/**
 * Proposal templates (docs/reference/proposing.md "Templates"): which headings count as a section,
 * and when a missing one refuses the proposal.
 */
const ALL = ARCHITECTURE_TEMPLATE.sections.map((s) => s.id);

/** A body with one `## heading` and a line of text per entry. */
function body(...headings: string[]): string {
  return headings.map((h) => `## ${h}\n\nSome text about ${h}.\n`).join("\n");
}

describe("missingSections", () => {
  it("finds every section of a body written from the template's own headings", () => {
    expect(
      missingSections(ARCHITECTURE_TEMPLATE, body(...ARCHITECTURE_TEMPLATE.sections.map((s) => s.heading))),
    ).toEqual([]);
  });

  it("names every section of a plain body, in the template's order", () => {
    expect(missingSections(ARCHITECTURE_TEMPLATE, "Add a managed Redis: caches everywhere.")).toEqual(ALL);
  });

  it("accepts aliases, other heading levels, numbering, colons and case", () => {
    const b = [
      "# 1. Motivation:",
      "Why.",
      "### SPECIFICATION",
      "- what",
      "## Rejected Ideas",
      "None.",
      "## Risks and mitigations",
      "> careful",
      "## Backwards Compatibility",
      "```\nkept\n```",
      "## Success criteria",
      "| a | b |\n|---|---|\n| 1 | 2 |",
    ].join("\n\n");
    expect(missingSections(ARCHITECTURE_TEMPLATE, b)).toEqual([]);
  });

  it("counts a heading with nothing under it as missing, and a sub-heading's text as its section's", () => {
    const b = "## Context\n\n## Proposal\n\n### Details\n\nThe change.\n\n## Risks\n\n---\n\n## Rollout\n\nStaged.";
    expect(missingSections(ARCHITECTURE_TEMPLATE, b)).toEqual(["context", "alternatives", "risks", "observability"]);
  });

  it("does not take a longer word for a section's name, nor text outside a heading", () => {
    const b = "## Contextual notes\n\ntext\n\n## Riskset\n\ntext\n\nRisks: none. Rollout: soon.";
    expect(missingSections(ARCHITECTURE_TEMPLATE, b)).toEqual(ALL);
  });

  it("finds the sections of the template's own skeleton once each is filled in", () => {
    const skeleton = templateMarkdown(ARCHITECTURE_TEMPLATE);
    // the skeleton's guidance is an HTML comment: headings alone, nothing written under them yet
    expect(missingSections(ARCHITECTURE_TEMPLATE, skeleton)).toEqual(ALL);
    const filled = skeleton.replace(/<!--[^>]*-->/g, "Written.");
    expect(missingSections(ARCHITECTURE_TEMPLATE, filled)).toEqual([]);
  });
});

describe("checkSections", () => {
  const partial = body("Context", "Proposal", "Alternatives");

  it("answers the missing sections when advisory and no template is named", () => {
    expect(checkSections(partial, undefined, "advisory")).toEqual(["risks", "rollout", "observability"]);
    expect(checkSections(partial, undefined, undefined)).toEqual(["risks", "rollout", "observability"]);
  });

  it("refuses with 422 missing_sections naming them when the request names the template", () => {
    let caught: unknown;
    try {
      checkSections(partial, "architecture", "advisory");
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ApsError);
    const e = caught as ApsError;
    expect(e.code).toBe("missing_sections");
    expect(HTTP_STATUS[e.code]).toBe(422);
    expect(e.missingSections).toEqual(["risks", "rollout", "observability"]);
    expect(e.message).toContain("## Risks");
  });

  it("refuses under PROPOSAL_TEMPLATE=required without a named template", () => {
    expect(() => checkSections(partial, undefined, "required")).toThrow(/risks, rollout, observability/);
  });

  it("lets a complete body through in every mode", () => {
    const full = body("Context", "Proposal", "Alternatives", "Risks", "Rollout", "Observability");
    expect(checkSections(full, "architecture", "required")).toEqual([]);
  });
});
