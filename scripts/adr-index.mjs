// npm run adr:index — writes docs/adr/README.md, the index of the architecture decision records:
// number, title, status and what superseded or amended each one, read from every
// `docs/adr/NNNN-*.md` file's first heading (`# NNNN — Title`) and its `Status:` paragraph.
// The current ADRs (the decisions that shape the whole repo) and the ones folded into a design page
// (`superseded by docs/design/<page>.md "<Section>"`, docs/design/README.md) get a table each.
// `--check` writes nothing: it exits 1 when the committed index differs from what it would write, or
// when an ADR breaks a rule below (each problem on stderr, one line each). `--dir <folder>` reads
// and writes another folder (the test uses a copy). Plain Node, no build needed.
//
// The rules (docs/adr/README.md repeats them for writers):
// - every ADR has a `Status:` line whose first words are one of STATES: `accepted`, `proposed`,
//   `deprecated`, `superseded by NNNN[, NNNN…]`, `amended by NNNN[, NNNN…]` — anything after them
//   must start with punctuation (`.`, `;`, `:`, `,`, `—`, `(`), e.g. `Status: accepted. Refines 0018.`;
// - every NNNN named as superseding or amending exists; a design page named as superseding exists
//   and has the section named (`superseded by docs/design/events.md "Outbox"`);
// - at most MAX_CURRENT ADRs are current (not superseded): a decision that only sets how one part
//   works belongs on that part's design page;
// - when an ADR's Status paragraph says it `Supersedes`, `Amends` or `Refines` an earlier one, that
//   earlier one's Status names it (`superseded by …` or `amended by …`): a reader of the old ADR
//   learns that it is no longer the whole story.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** An ADR file name: four digits, a dash, a slug. */
const ADR_FILE = /^(\d{4})-[a-z0-9-]+\.md$/;
/** A list of ADR numbers: `0091`, `0091, 0107`, `0091 and 0107`, `0091, 0107 and 0125`. */
const NUMBERS = String.raw`\d{4}(?:(?:,\s*(?:and\s+)?|\s+and\s+)\d{4})*`;
/** The status vocabulary, matched at the start of the Status paragraph (case-insensitive). */
const STATE = new RegExp(
  String.raw`^(accepted|proposed|deprecated|(superseded|amended) by (${NUMBERS}))(?=$|\s*[.;:,—(])\s*[.;:,—]?\s*`,
  "i",
);
/** Folded into a design page: `superseded by docs/design/events.md "Outbox"`, then punctuation or the end. */
const FOLDED = /^superseded by (docs\/design\/[a-z0-9-]+\.md)(?: "([^"]+)")?(?=$|\s*[.;:,—(])\s*[.;:,—]?\s*/i;
/** The most current ADRs the repo keeps (docs/adr/README.md "Writing one"). */
export const MAX_CURRENT = 40;
/** A later ADR's own claim on earlier ones, in its Status paragraph: `Amends 0005 and 0091 (…)`. */
const CLAIM = /\b(supersedes|amends|refines)\b([^;]*?)(?:;|\.(?:\s|$)|$)/gi;

/**
 * @typedef {object} Adr
 * @property {string} number four digits, e.g. "0005"
 * @property {string} file the file name, e.g. "0005-outbox-relay-without-row-locks.md"
 * @property {string} title the first heading without its number
 * @property {string} status the whole Status paragraph (one line), "" when there is none
 * @property {"accepted"|"proposed"|"deprecated"|"superseded"|"amended"|undefined} state
 * @property {string[]} by the ADRs that superseded or amended it
 * @property {{ page: string, section: string } | undefined} folded the design page (and section) that superseded it
 * @property {string} note what follows the state in the Status paragraph
 * @property {string[]} claims earlier ADRs this one says it supersedes, amends or refines
 */

/**
 * Reads the ADRs of `dir`, in number order. Problems (no heading, a heading whose number is not the
 * file's, no parseable status) are pushed onto `problems` as one line each.
 * @param {string} dir @param {string[]} problems @returns {Adr[]}
 */
export function readAdrs(dir, problems) {
  const files = readdirSync(dir)
    .filter((f) => ADR_FILE.test(f))
    .sort();
  return files.map((file) => {
    const number = file.slice(0, 4);
    const lines = readFileSync(join(dir, file), "utf8").split(/\r?\n/);
    const heading = /^# (\d{4})\s*[—–:-]\s*(.+?)\s*$/.exec(lines[0] ?? "");
    if (!heading) problems.push(`${file}: the first line is not a heading "# ${number} — Title"`);
    else if (heading[1] !== number) problems.push(`${file}: its heading says ${heading[1]}, its file name ${number}`);
    const at = lines.findIndex((l) => /^status:/i.test(l));
    let status = "";
    if (at >= 0) {
      const para = [];
      for (let i = at; i < lines.length && lines[i].trim() !== ""; i++) para.push(lines[i].trim());
      status = para.join(" ").replace(/^status:\s*/i, "");
    }
    const f = FOLDED.exec(status);
    const m = f ? null : STATE.exec(status);
    if (at < 0) problems.push(`${file}: no "Status:" line (e.g. "Status: accepted")`);
    else if (!m && !f)
      problems.push(
        `${file}: status "${status.slice(0, 60)}" does not start with accepted, proposed, deprecated, ` +
          `"superseded by NNNN" or "amended by NNNN"`,
      );
    const state = f ? "superseded" : m ? /** @type {Adr["state"]} */ ((m[2] ?? m[1]).toLowerCase()) : undefined;
    const by = m?.[3] ? [...new Set(m[3].match(/\d{4}/g))] : [];
    const note = f ? status.slice(f[0].length).trim() : m ? status.slice(m[0].length).trim() : "";
    const folded = f ? { page: f[1], section: f[2] ?? "" } : undefined;
    const claims = [];
    // What this ADR says about earlier ones (outside its own "superseded/amended by" state).
    for (const c of note.matchAll(CLAIM)) claims.push(...(c[2].match(/\b\d{4}\b/g) ?? []));
    return {
      number,
      file,
      title: heading?.[2] ?? file,
      status,
      state,
      by,
      folded,
      note,
      claims: [...new Set(claims)].filter((n) => n !== number),
    };
  });
}

/**
 * The sections of a Markdown page: the text of every `##`…`######` heading.
 * @param {string} text @returns {Set<string>}
 */
const sections = (text) => new Set([...text.matchAll(/^#{2,6}\s+(.+?)\s*$/gm)].map((h) => h[1]));

/**
 * Cross-checks `adrs`: numbers are unique, every ADR named by a status exists, every design page
 * (and section) named by a status exists under `root`, at most MAX_CURRENT are current, and every
 * earlier ADR a later one supersedes, amends or refines says so in its own status (or is folded into
 * a design page). Pushes one line per problem.
 * @param {Adr[]} adrs @param {string[]} problems @param {string} [root] the repo whose docs/design holds the pages
 */
export function crossCheck(adrs, problems, root = ROOT) {
  const pages = new Map();
  for (const a of adrs) {
    if (!a.folded) continue;
    const path = join(root, a.folded.page);
    if (!pages.has(path)) pages.set(path, existsSync(path) ? sections(readFileSync(path, "utf8")) : null);
    const heads = pages.get(path);
    if (!heads) problems.push(`${a.file}: "superseded by ${a.folded.page}", but there is no such page`);
    else if (a.folded.section && !heads.has(a.folded.section))
      problems.push(`${a.file}: ${a.folded.page} has no section "${a.folded.section}"`);
  }
  const current = adrs.filter((a) => a.state !== "superseded").length;
  if (current > MAX_CURRENT)
    problems.push(
      `docs/adr: ${current} current ADRs, more than ${MAX_CURRENT}: fold the ones that set how one part works into its design page`,
    );
  const byNumber = new Map();
  for (const a of adrs) {
    if (byNumber.has(a.number)) problems.push(`${a.file}: number ${a.number} is also ${byNumber.get(a.number).file}`);
    else byNumber.set(a.number, a);
  }
  for (const a of adrs) {
    for (const n of a.by)
      if (!byNumber.has(n)) problems.push(`${a.file}: "${a.state} by ${n}", but there is no ADR ${n}`);
    for (const n of a.claims) {
      const old = byNumber.get(n);
      if (!old) problems.push(`${a.file}: its status names ADR ${n}, which does not exist`);
      else if (!old.by.includes(a.number) && !old.folded)
        problems.push(
          `${old.file}: ${a.file} says it supersedes, amends or refines it; its Status should say ` +
            `"superseded by ${a.number}" or "amended by ${a.number}" with what changed`,
        );
    }
  }
}

/** `s` safe inside a Markdown table cell. @param {string} s */
const cell = (s) => s.replace(/\|/g, "\\|");

/** A design page's section as a link from docs/adr/: `[events.md "Outbox"](../design/events.md#outbox)`. */
const pageLink = (/** @type {{ page: string, section: string }} */ f) => {
  const name = f.page.replace(/^docs\/design\//, "");
  const anchor = f.section
    ? `#${f.section
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, "")
        .trim()
        .replace(/\s/g, "-")}`
    : "";
  return `[${name}${f.section ? ` "${f.section}"` : ""}](../design/${name}${anchor})`;
};

/**
 * The text of docs/adr/README.md for `adrs`: the current ADRs, then the ones folded into design pages.
 * @param {Adr[]} adrs @returns {string}
 */
export function render(adrs) {
  const files = new Map(adrs.map((a) => [a.number, a.file]));
  const link = (n) => (files.has(n) ? `[${n}](${files.get(n)})` : n);
  const current = adrs.filter((a) => !a.folded);
  const folded = adrs.filter((a) => a.folded);
  const count = (state) => current.filter((a) => a.state === state).length;
  const rows = current.map((a) => {
    const changed = a.state === "superseded" || a.state === "amended";
    return `| ${link(a.number)} | ${cell(a.title)} | ${a.state ?? "?"} | ${a.by.map(link).join(", ")} | ${
      changed ? cell(a.note) : ""
    } |`;
  });
  const foldedRows = folded.map(
    (a) => `| ${link(a.number)} | ${cell(a.title)} | ${pageLink(/** @type {any} */ (a.folded))} |`,
  );
  return `# Architecture decision records

<!-- Generated by scripts/adr-index.mjs from each ADR's first heading and Status line. Do not edit:
     run \`npm run adr:index\` after adding an ADR or changing a status; CI runs it with --check. -->

An ADR records a decision that shapes the whole repo: a rule every service, package or test
follows (how services talk, how events are written, how the edge is declared, what CI requires).
How one part works — its limits, its algorithm, a fix, a CI lane, a bench method — is not an ADR:
it is stated on that part's design page under [\`docs/design/\`](../design/README.md), which holds
today's truth. Code comments cite design pages, not ADRs. At most ${MAX_CURRENT} ADRs are current;
the check fails beyond that.

${current.length} current ADRs (${count("accepted")} accepted, ${count("amended")} amended${
    count("superseded") ? `, ${count("superseded")} superseded by a later ADR` : ""
  }${count("deprecated") ? `, ${count("deprecated")} deprecated` : ""}${
    count("proposed") ? `, ${count("proposed")} proposed` : ""
  }) and ${folded.length} folded into the design pages.

**Writing one.** \`docs/adr/NNNN-slug.md\`, starting \`# NNNN — Title\`, then a line
\`Status: accepted\` (or \`proposed\`, \`deprecated\`, \`superseded by NNNN\`, \`amended by NNNN\`,
optionally followed by punctuation and a note, e.g. \`Status: amended by 0091. The relay marks a
batch with one UPDATE.\`), then Context / Decision / Consequences. Record the decision, not the
issue item. When a new ADR supersedes, amends or refines an older one, say so in its Status line
(\`Status: accepted. Amends 0070.\`) and change the older one's Status to \`amended by\` or
\`superseded by\` the new one with a one-line pointer to what changed: the check fails until both
say it. Then run \`npm run adr:index\`.

**Folding one into a design page.** When a page states all an ADR decided, the ADR becomes a stub:
its heading, \`Status: superseded by docs/design/<page>.md "<Section>".\` with the decision in one
line, and a pointer to its original text in the history. The check fails when the page or the
section does not exist.

## Current

| ADR | Title | Status | Superseded / amended by | What changed |
|---|---|---|---|---|
${rows.join("\n")}

## Folded into the design pages

| ADR | Title | Where it stands today |
|---|---|---|
${foldedRows.join("\n")}
`;
}

function main() {
  const args = process.argv.slice(2);
  const check = args.includes("--check");
  const dirArg = args.indexOf("--dir");
  const dir = dirArg >= 0 ? args[dirArg + 1] : join(ROOT, "docs/adr");
  const index = join(dir, "README.md");
  const problems = [];
  const adrs = readAdrs(dir, problems);
  crossCheck(adrs, problems);
  const text = render(adrs);
  if (check) {
    let committed = "";
    try {
      committed = readFileSync(index, "utf8");
    } catch {
      // missing: reported as stale below
    }
    if (committed !== text) problems.push(`${index}: stale; run \`npm run adr:index\` and commit it`);
  } else {
    writeFileSync(index, text);
  }
  for (const p of problems) console.error(p);
  if (problems.length > 0) process.exit(1);
  if (!check) console.log(`${index}: ${adrs.length} ADRs`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
