import { ApsError } from "@aps/platform";
import { ARCHITECTURE_TEMPLATE, missingSections, PROPOSAL_TEMPLATES, type TemplateEnforcement } from "./templates.js";

/**
 * Reads a proposal's `body` against its template (docs/reference/proposing.md "Templates"): the
 * named `template`, else the architecture template. Returns the section ids the body lacks (`[]`
 * when complete).
 *
 * @param template the request's `template`, if any: it makes every section required
 * @param enforcement `PROPOSAL_TEMPLATE` (undefined = `advisory`); `required` makes every section required
 * @throws ApsError `missing_sections` (422) naming the missing sections, when they are required
 */
export function checkSections(
  body: string,
  template: string | undefined,
  enforcement: TemplateEnforcement | undefined,
): string[] {
  const t = (template === undefined ? undefined : PROPOSAL_TEMPLATES.get(template)) ?? ARCHITECTURE_TEMPLATE;
  const missing = missingSections(t, body);
  if (missing.length > 0 && (template !== undefined || enforcement === "required")) {
    const headings = t.sections.filter((s) => missing.includes(s.id)).map((s) => `## ${s.heading}`);
    throw new ApsError(
      "missing_sections",
      `the ${t.name} template's section${missing.length === 1 ? "" : "s"} ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} missing: ` +
        `add ${headings.join(", ")} with some text under each (GET /v1/templates)`,
      undefined,
      { missingSections: missing },
    );
  }
  return missing;
}
