// npm run docs:check (with the ADR index and the event table) — the repo's citations point at today's truth (docs/design/README.md):
// - every `docs/….md` path a tracked file names exists (a moved or removed page fails here);
// - code, scripts, charts, tests and the READMEs cite design pages, not ADR numbers (`docs/adr/NNNN`,
//   `ADR NNNN`); ADRs are cited only from docs/;
// - nothing outside docs/adr/ cites an issue ("issue 31 item 5"): an issue is a request, the
//   design page is where its outcome is written down.
// Prints one line per problem (`path:line: what`) and exits 1 when there is any. Plain Node, no build
// needed. `--root <dir>` checks another tree (the test uses a copy).
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Files never read: generated code, lockfiles, binary assets, the outputs of past bench runs, the
 * changelogs, and applied migrations (a migration is never edited once released: docs/design/services.md#migrations).
 */
const SKIP = [
  /(^|\/)migrations\/[^/]+$/,
  /(^|\/)gen\//,
  /package-lock\.json$/,
  /\.(png|jpg|jpeg|gif|ico|woff2?|tgz|pb|bin)$/,
  /^test\/bench\/results\//,
  /^docs\/adr\//,
  /^docs\/reference\/(index\.json|versioning\.md)$/, // the served docs' changelogs: what each version changed, as it was said
];
/** Files that name ADRs or issues as their subject: the ADR tooling and its test, and this check's own. */
const SUBJECT = new Set([
  "scripts/adr-index.mjs",
  "test/ops/adr-index.test.ts",
  "scripts/check-citations.mjs",
  "test/ops/citations.test.ts",
]);
/** A docs path as written in text, with its section's anchor if any: `docs/design/events.md#outbox`. */
const DOCS_PATH = /(?<![\w./-])(docs\/[\w./-]+?\.md)\b(?:#([\w-]+))?/g;

/** GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to dashes. */
const anchorOf = (/** @type {string} */ heading) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .trim()
    .replace(/\s/g, "-");
/** An ADR citation: `docs/adr/0091`, `adr/0091-…`, `ADR 0091`, `ADRs 0091`. */
const ADR = /\b(?:docs\/adr\/\d{4}|ADRs? \d{4})/;
/**
 * What an ADR list leaves when its first number is rewritten: `(…, like rotation, 0117)`, `(0223)`,
 * `… budgets of 0157)`, a wrapped ` * 0129): …`, `completing 0105 and 0110`. A four-digit number
 * with a leading zero, not part of `U+0000` or a decimal, before `)`, `,`, `;` or `and 0NNN`.
 */
const BARE_ADR = /(?<![+.\d\w])0[0-2]\d\d(?=\)|[,;] | and 0\d{3})/;
/** An issue citation: `issue 31`, `Issue 31 item 5`, `issues 30 and 31`. */
const ISSUE = /\bissues? \d+\b/i;

/**
 * The problems of the tracked files under `root`, one line each.
 * @param {string} root a git work tree @returns {string[]}
 */
export function findProblems(root) {
  const files = execFileSync("git", ["ls-files", "-z"], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  })
    .split("\0")
    .filter((f) => f && !SKIP.some((r) => r.test(f)) && !SUBJECT.has(f) && existsSync(join(root, f)));
  const problems = [];
  /** @type {Map<string, Set<string>>} page → the anchors of its headings */
  const anchors = new Map();
  const anchorsOf = (/** @type {string} */ page) => {
    if (!anchors.has(page))
      anchors.set(
        page,
        new Set(
          [...readFileSync(join(root, page), "utf8").matchAll(/^#{1,6}\s+(.+?)\s*$/gm)].map((h) => anchorOf(h[1])),
        ),
      );
    return /** @type {Set<string>} */ (anchors.get(page));
  };
  for (const file of files) {
    const text = readFileSync(join(root, file), "utf8");
    if (text.includes("\0")) continue; // binary
    const inDocs = file.startsWith("docs/");
    const lines = text.split("\n");
    lines.forEach((line, i) => {
      const at = `${file}:${i + 1}`;
      // a citation wrapped onto the next line: `(ADR` / ` * 0162)`, `issue` / `// 31 item 4`
      const next = `${line.replace(/\s+$/, "")} ${(lines[i + 1] ?? "").replace(/^\s*(\*|\/\/|#|--)?\s*/, "")}`;
      if (!inDocs && !ADR.test(line) && /\bADRs?$/.test(line.trimEnd()) && ADR.test(next))
        problems.push(`${at}: cites an ADR; cite the design page (docs/design/)`);
      if (!ISSUE.test(line) && /\bissues?$/i.test(line.trimEnd()) && ISSUE.test(next))
        problems.push(`${at}: cites an issue; cite the design page or say the rule`);
      for (const m of line.matchAll(DOCS_PATH)) {
        if (!existsSync(join(root, m[1]))) problems.push(`${at}: ${m[1]} does not exist`);
        else if (m[2] && !anchorsOf(m[1]).has(m[2])) problems.push(`${at}: ${m[1]} has no section #${m[2]}`);
        // a section range glued to the anchor (`#request-path–5`, `#x–§9`) names no section
        else if (m[2] && /^[–§]/.test(line.slice((m.index ?? 0) + m[0].length)))
          problems.push(`${at}: ${m[0]} is followed by a section range; cite each section`);
      }
      if (!inDocs && (ADR.test(line) || BARE_ADR.test(line)))
        problems.push(`${at}: cites an ADR; cite the design page (docs/design/)`);
      if (ISSUE.test(line)) problems.push(`${at}: cites an issue; cite the design page or say the rule`);
    });
  }
  return problems;
}

function main() {
  const args = process.argv.slice(2);
  const at = args.indexOf("--root");
  const root = at >= 0 ? args[at + 1] : join(dirname(fileURLToPath(import.meta.url)), "..");
  const problems = findProblems(root);
  for (const p of problems) console.error(p);
  if (problems.length > 0) {
    console.error(`${problems.length} citation problem(s) (scripts/check-citations.mjs)`);
    process.exit(1);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
