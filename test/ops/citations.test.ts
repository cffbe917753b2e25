import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ROOT } from "../support/system.js";

/**
 * Citations point at today's truth (docs/design/README.md, scripts/check-citations.mjs): code cites
 * design pages, never an ADR number or an issue, and every docs path a file names exists.
 */
function check(root: string) {
  return spawnSync(process.execPath, [join(ROOT, "scripts/check-citations.mjs"), "--root", root], {
    cwd: ROOT,
    encoding: "utf8",
  });
}

/** A throwaway git work tree holding `files` (path → text), all tracked. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "aps-cite-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  for (const args of [
    ["init", "-q"],
    ["add", "-A"],
  ]) {
    const r = spawnSync("git", args, { cwd: dir, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  }
  return dir;
}

describe("citations (scripts/check-citations.mjs)", () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it("the repo's own citations pass", () => {
    const r = check(ROOT);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("passes a file that cites a design page that exists", () => {
    const dir = tree({
      "docs/design/events.md": "# Events\n\n## Outbox\n",
      "src/a.ts": "// the relay (docs/design/events.md#outbox)\nexport const a = 1;\n",
    });
    dirs.push(dir);
    const r = check(dir);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("fails, naming file and line, on an ADR number, an issue, a docs page or a section that does not exist", () => {
    const dir = tree({
      "docs/design/events.md": "# Events\n\n## Outbox\n",
      "src/a.ts": [
        "// fine (docs/design/events.md)",
        "// the relay (docs/adr/0091)",
        "// as issue 31 item 4 asked",
        "// see docs/architecture.md",
        "// the relay (docs/design/events.md#relay)",
        "// wrapped at the end of a line (ADR",
        "// 0091)",
        "// a range (docs/design/events.md#outbox–5)",
        "// what a rewritten list leaves (docs/design/events.md, like the relay, 0117)",
        "// port 8080 (a number, not a citation), code 0x0123, no U+0000), buckets [0.0005, 1]",
        "// the per-source budgets of 0157)",
        "// completing 0105 and 0110: the contract",
      ].join("\n"),
    });
    dirs.push(dir);
    const r = check(dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^src\/a\.ts:2: cites an ADR/m);
    expect(r.stderr).toMatch(/^src\/a\.ts:3: cites an issue/m);
    expect(r.stderr).toMatch(/^src\/a\.ts:4: docs\/architecture\.md does not exist/m);
    expect(r.stderr).toMatch(/^src\/a\.ts:5: docs\/design\/events\.md has no section #relay/m);
    expect(r.stderr).toMatch(/^src\/a\.ts:6: cites an ADR/m);
    expect(r.stderr).toMatch(/^src\/a\.ts:8: docs\/design\/events\.md#outbox is followed by a section range/m);
    expect(r.stderr).toMatch(/^src\/a\.ts:9: cites an ADR/m);
    expect(r.stderr).toMatch(/^src\/a\.ts:11: cites an ADR/m);
    expect(r.stderr).toMatch(/^src\/a\.ts:12: cites an ADR/m);
    expect(r.stderr).not.toMatch(/^src\/a\.ts:(1|10):/m);
  });
});
