import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../support/system.js";

/**
 * Docs a newcomer can trust (docs/design/README.md): the ADR index (docs/adr/README.md) and the event
 * table of docs/design/events.md are generated (scripts/adr-index.mjs, scripts/event-table.mjs) and
 * the committed copies must be what the generators write; every ADR has a status in one vocabulary,
 * a superseded or amended ADR points to ADRs that exist, an ADR folded into a design page points to
 * a page and section that exist, and at most 40 ADRs are current.
 */
const ADR_DIR = join(ROOT, "docs/adr");
const EVENTS_PAGE = join(ROOT, "docs/design/events.md");

function run(script: string, ...args: string[]) {
  return spawnSync(process.execPath, [join(ROOT, "scripts", script), ...args], { cwd: ROOT, encoding: "utf8" });
}

/** The ADR files, e.g. `0005-outbox-relay-without-row-locks.md`. */
const adrFiles = () => readdirSync(ADR_DIR).filter((f) => /^\d{4}-.*\.md$/.test(f));

/** The status vocabulary, then nothing or punctuation (`Status: accepted. Refines 0018.`). */
const VOCABULARY =
  /^Status: (accepted|proposed|deprecated|(superseded|amended) by (\d{4}(?:(?:,\s*(?:and\s+)?|\s+and\s+)\d{4})*)|superseded by docs\/design\/[a-z0-9-]+\.md "[^"]+")(?=$|\s*[.;:,—(])/i;

describe("the ADR index", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "aps-adr-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("the committed docs/adr/README.md is what the generator writes", () => {
    const r = run("adr-index.mjs", "--check");
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("every ADR has a status in the vocabulary, and every ADR it names exists", () => {
    const numbers = new Set(adrFiles().map((f) => f.slice(0, 4)));
    const bad: string[] = [];
    for (const f of adrFiles()) {
      const line = readFileSync(join(ADR_DIR, f), "utf8")
        .split("\n")
        .find((l) => /^status:/i.test(l));
      const m = line === undefined ? null : VOCABULARY.exec(line);
      if (!m) bad.push(`${f}: ${line ?? "no Status line"}`);
      for (const n of m?.[3]?.match(/\d{4}/g) ?? []) if (!numbers.has(n)) bad.push(`${f}: ${m![2]} by ${n}, absent`);
    }
    expect(bad).toEqual([]);
  });

  it("lists every ADR once, with its status", () => {
    const index = readFileSync(join(ADR_DIR, "README.md"), "utf8");
    const rows = index.split("\n").filter((l) => l.startsWith("| ["));
    expect(rows.map((l) => /^\| \[\d{4}\]\(([^)]+)\)/.exec(l)?.[1]).sort()).toEqual(adrFiles().sort());
    // a current ADR keeps its status row; one folded into a design page links the page's section
    expect(index).toMatch(/\| \[0107\]\(0107-[^)]*\) \| .* \| (accepted|amended) \|/);
    expect(index).toMatch(
      /\| \[0001\]\(0001-[^)]*\) \| .* \| \[[a-z-]+\.md "[^"]+"\]\(\.\.\/design\/[a-z-]+\.md#[a-z0-9-]+\) \|/,
    );
  });

  it.each([
    [
      "an ADR without a status",
      (d: string) => {
        const f = join(
          d,
          adrFiles().find((n) => n.startsWith("0019-"))!,
        );
        writeFileSync(f, readFileSync(f, "utf8").replace(/^Status:.*\n/m, ""));
      },
      /0019-[a-z-]+\.md: no "Status:" line/,
    ],
    [
      "a status outside the vocabulary",
      (d: string) => {
        const f = join(
          d,
          adrFiles().find((n) => n.startsWith("0019-"))!,
        );
        writeFileSync(f, readFileSync(f, "utf8").replace(/^Status:.*$/m, "Status: mostly accepted"));
      },
      /0019-[a-z-]+\.md: status "mostly accepted" does not start with/,
    ],
    [
      "superseded by an ADR that does not exist",
      (d: string) => {
        const f = join(
          d,
          adrFiles().find((n) => n.startsWith("0019-"))!,
        );
        writeFileSync(f, readFileSync(f, "utf8").replace(/^Status:.*$/m, "Status: superseded by 0999."));
      },
      /0019-[a-z-]+\.md: "superseded by 0999", but there is no ADR 0999/,
    ],
    [
      "an ADR folded into a design page that does not exist",
      (d: string) => {
        const f = join(
          d,
          adrFiles().find((n) => n.startsWith("0001-"))!,
        );
        writeFileSync(
          f,
          readFileSync(f, "utf8").replace(/^Status:.*$/m, 'Status: superseded by docs/design/nowhere.md "X".'),
        );
      },
      /0001-[a-z0-9-]+\.md: "superseded by docs\/design\/nowhere\.md", but there is no such page/,
    ],
    [
      "an ADR folded into a section its page does not have",
      (d: string) => {
        const f = join(
          d,
          adrFiles().find((n) => n.startsWith("0001-"))!,
        );
        writeFileSync(
          f,
          readFileSync(f, "utf8").replace(
            /^Status:.*$/m,
            'Status: superseded by docs/design/events.md "No such section".',
          ),
        );
      },
      /0001-[a-z0-9-]+\.md: docs\/design\/events\.md has no section "No such section"/,
    ],
    [
      "more than 40 current ADRs",
      (d: string) => {
        for (let i = 0; i < 41; i++)
          writeFileSync(
            join(d, `09${String(i).padStart(2, "0")}-extra.md`),
            `# 09${String(i).padStart(2, "0")} — Extra\n\nStatus: accepted\n`,
          );
      },
      /docs\/adr: \d+ current ADRs, more than 40/,
    ],
    [
      "a new ADR not in the index",
      (d: string) => writeFileSync(join(d, "0998-new.md"), "# 0998 — New\n\nStatus: accepted\n"),
      /README\.md: stale/,
    ],
    [
      "a new ADR amending one whose status does not say so",
      (d: string) => {
        writeFileSync(join(d, "0998-new.md"), "# 0998 — New\n\nStatus: accepted. Amends 0019.\n");
        expect(run("adr-index.mjs", "--dir", d).status).toBe(1); // the index is written, the rule still fails
      },
      /0019-[a-z-]+\.md: 0998-new\.md says it supersedes, amends or refines it/,
    ],
  ])("--check fails, naming the file, on %s", (_what, edit, message) => {
    const copy = mkdtempSync(join(dir, "adr-"));
    cpSync(ADR_DIR, copy, { recursive: true });
    expect(run("adr-index.mjs", "--check", "--dir", copy).status).toBe(0);
    edit(copy);
    const r = run("adr-index.mjs", "--check", "--dir", copy);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(message);
  });
});

describe("the event table of docs/design/events.md", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "aps-events-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("is what the generator writes from the catalogue and the consumers in the code", () => {
    const r = run("event-table.mjs", "--check");
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("has one row per catalogue event and names the durable consumers", async () => {
    const { EVENT_TYPES } = await import("@aps/platform");
    const text = readFileSync(EVENTS_PAGE, "utf8");
    const block = text.slice(text.indexOf("<!-- events:begin -->"), text.indexOf("<!-- events:end -->"));
    for (const type of Object.keys(EVENT_TYPES)) expect(block.split(`| \`${type}\` |`)).toHaveLength(2);
    expect(block).toMatch(/\| `council\.case_closed` \| council \| `CaseClosed` \| .*identity \(`identity-sagacity`\)/);
    expect(block).toMatch(/\| `forum\.post_on_agenda` \| forum \| `PostOnAgenda` \| council \(`council-agenda`\)/);
  });

  it("regenerates from empty markers byte for byte, and fails naming the line on a hand-edited row", () => {
    const committed = readFileSync(EVENTS_PAGE, "utf8");
    const emptied = committed.replace(/(<!-- events:begin -->)[\s\S]*?(<!-- events:end -->)/, "$1\n$2");
    expect(emptied.length).toBeLessThan(committed.length - 2_000);
    const copy = join(dir, "events.md");
    writeFileSync(copy, emptied);
    expect(run("event-table.mjs", "--check", "--file", copy).status).toBe(1);
    expect(run("event-table.mjs", "--file", copy).status).toBe(0);
    expect(readFileSync(copy, "utf8")).toBe(committed);

    writeFileSync(
      copy,
      committed.replace(
        "| `forum.vote_cast` | forum | `VoteCast` | ",
        "| `forum.vote_cast` | forum | `VoteCast` | council, ",
      ),
    );
    const r = run("event-table.mjs", "--check", "--file", copy);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/events\.md:\d+: the event table is stale/);
    expect(r.stderr).toContain("council, notifications");
  });
});
