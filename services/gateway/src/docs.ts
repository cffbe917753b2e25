import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  CHANGELOG_SLUG,
  renderChangelog,
  renderLlmsTxt,
  type DocsManifest,
  type ManifestPage,
} from "@aps/api/meta/llms-txt";

/**
 * The platform's reference pages (docs/design/search-and-translation.md#search-engines): Markdown files in `docs/reference/` of the repo,
 * described by `docs/reference/index.json` — the current `DOCS_VERSION`, a changelog, and per page
 * its title, note, section, the DOCS_VERSION in which it last changed and its SHA-256. The pages
 * are read from the repo at start (no build step copies them), like skill.md.
 */

/** `docs/reference/` of the repo (this file is `services/gateway/{src,dist}/docs.{ts,js}`). */
export const DOCS_DIR = fileURLToPath(new URL("../../../docs/reference/", import.meta.url));
/** The manifest's file name inside the docs folder. */
export const MANIFEST_FILE = "index.json";

export type { DocsManifest, ManifestPage } from "@aps/api/meta/llms-txt";

/** A page ready to serve. */
export interface DocsPage extends ManifestPage {
  markdown: string;
  /** Strong ETag of the served bytes: `"<sha256 hex>"`. */
  etag: string;
}

/** Everything `/docs` serves. */
export interface Docs {
  manifest: DocsManifest;
  pages: Map<string, DocsPage>;
  llmsTxt: string;
  llmsEtag: string;
  /** `/docs/changelog.md`: every DOCS_VERSION's changes, newest first (`renderChangelog`). */
  changelog: string;
  changelogEtag: string;
}

/** SHA-256 hex of a UTF-8 text. */
export function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Strong entity tag of a text. */
export function etagOf(text: string): string {
  return `"${sha256(text)}"`;
}

/** Reads and shape-checks the manifest; throws with the reason when it is malformed. */
export function readManifest(dir = DOCS_DIR): DocsManifest {
  const path = join(dir, MANIFEST_FILE);
  const m = JSON.parse(readFileSync(path, "utf8")) as DocsManifest;
  const int = (n: unknown) => Number.isInteger(n) && (n as number) >= 1;
  if (!int(m.docsVersion) || !Array.isArray(m.changelog) || !Array.isArray(m.pages))
    throw new Error(`${path}: needs docsVersion (integer ≥ 1), changelog[] and pages[]`);
  for (const p of m.pages) {
    if (
      !/^[a-z0-9][a-z0-9-]*$/.test(p.slug) ||
      !p.title ||
      !p.section ||
      !int(p.changedIn) ||
      !/^[0-9a-f]{64}$/.test(p.sha256)
    ) {
      throw new Error(`${path}: bad page entry ${JSON.stringify(p)}`);
    }
  }
  return m;
}

/** Markdown page files (`*.md`) present in the docs folder, as slugs, sorted. */
export function pageFiles(dir = DOCS_DIR): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".md"))
    .map((f) => f.slice(0, -3))
    .sort();
}

/**
 * Consistency problems between the manifest and the page files (empty when all is well):
 * a page file not in the manifest or the reverse; a page whose text no longer has the recorded
 * SHA-256 (its text changed but its recorded version and hash did not: bump `docsVersion`, set
 * the page's `changedIn` to it, record the new hash and add a changelog entry); `changedIn`
 * above `docsVersion`; a changelog that does not have exactly one entry per version 1..N; and no
 * page changed in the current version (when N > 1).
 */
export function checkDocs(dir = DOCS_DIR): string[] {
  const problems: string[] = [];
  const m = readManifest(dir);
  const files = new Set(pageFiles(dir));
  const listed = new Set<string>();
  for (const p of m.pages) {
    if (listed.has(p.slug)) problems.push(`${p.slug}: listed twice in ${MANIFEST_FILE}`);
    listed.add(p.slug);
    if (!files.has(p.slug)) {
      problems.push(`${p.slug}: listed in ${MANIFEST_FILE} but ${p.slug}.md does not exist`);
      continue;
    }
    const actual = sha256(readFileSync(join(dir, `${p.slug}.md`), "utf8"));
    if (actual !== p.sha256) {
      problems.push(
        `${p.slug}.md changed (sha256 ${actual}) but ${MANIFEST_FILE} still records sha256 ${p.sha256} from DOCS_VERSION ${p.changedIn}: ` +
          `raise docsVersion to ${m.docsVersion + 1}, set this page's changedIn to it, record the new sha256 and add a changelog entry`,
      );
    }
    if (p.changedIn > m.docsVersion)
      problems.push(`${p.slug}: changedIn ${p.changedIn} is above docsVersion ${m.docsVersion}`);
  }
  for (const f of files) if (!listed.has(f)) problems.push(`${f}.md is not listed in ${MANIFEST_FILE}`);
  if (listed.has(CHANGELOG_SLUG)) problems.push(`${CHANGELOG_SLUG}: the name of the generated changelog page`);
  const versions = m.changelog.map((c) => c.version);
  const want = Array.from({ length: m.docsVersion }, (_, i) => i + 1);
  if (
    versions
      .slice()
      .sort((a, b) => a - b)
      .join() !== want.join() ||
    m.changelog.some((c) => !c.changes)
  ) {
    problems.push(
      `changelog must have one non-empty entry for each DOCS_VERSION 1..${m.docsVersion} (has ${versions.join(", ")})`,
    );
  }
  if (m.docsVersion > 1 && !m.pages.some((p) => p.changedIn === m.docsVersion))
    problems.push(`no page records a change in DOCS_VERSION ${m.docsVersion}`);
  return problems;
}

/** Loads the manifest and every page it lists (throws when one is missing or the manifest is malformed). */
export function loadDocs(dir = DOCS_DIR): Docs {
  const manifest = readManifest(dir);
  const pages = new Map<string, DocsPage>();
  for (const p of manifest.pages) {
    const markdown = readFileSync(join(dir, `${p.slug}.md`), "utf8");
    pages.set(p.slug, { ...p, markdown, etag: etagOf(markdown) });
  }
  const llmsTxt = renderLlmsTxt(manifest);
  const changelog = renderChangelog(manifest);
  return { manifest, pages, llmsTxt, llmsEtag: etagOf(llmsTxt), changelog, changelogEtag: etagOf(changelog) };
}
