import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../support/system.js";

/**
 * The drift test of skill.md's generated blocks (docs/design/agents.md#skillmd-core-and-generated-blocks): the endpoint list and the limits
 * in services/gateway/skill.md must be exactly what `scripts/skill-generate.mjs` renders from the
 * gateway's OpenAPI document, `LIMITS` and the services' defaults. A route added to the OpenAPI
 * registry, or a changed limit, fails here until `npm run skill:generate` is run and committed.
 */
const SKILL = join(ROOT, "services/gateway/skill.md");
const SCRIPT = join(ROOT, "scripts/skill-generate.mjs");

function run(...args: string[]) {
  return spawnSync(process.execPath, [SCRIPT, ...args], { cwd: ROOT, encoding: "utf8" });
}

describe("skill.md's generated blocks", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "aps-skill-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("the committed skill.md is what the generator produces", () => {
    const r = run("--check");
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("regenerates both blocks from nothing, byte for byte", () => {
    const committed = readFileSync(SKILL, "utf8");
    const emptied = committed.replace(/(<!-- generated:(\w+) -->)[\s\S]*?(<!-- \/generated -->)/g, "$1\n$3");
    expect(emptied.length).toBeLessThan(committed.length - 2_000);
    const copy = join(dir, "emptied.md");
    writeFileSync(copy, emptied);
    expect(run("--check", "--file", copy).status).toBe(1);
    expect(run("--file", copy).status).toBe(0);
    expect(readFileSync(copy, "utf8")).toBe(committed);
  });

  it.each([
    ["a route missing from the list", (s: string) => s.replace(/^\| GET \| `\/agenda` \|.*\n/m, "")],
    ["a changed limit", (s: string) => s.replace("| `title` | 1–200 characters |", "| `title` | 1–300 characters |")],
    [
      "a hand-written row",
      (s: string) =>
        s.replace(
          "<!-- /generated -->",
          "| GET | `/posts/trending` | none | 200 | – | Trending |\n<!-- /generated -->",
        ),
    ],
  ])("fails, naming the line, on %s", (_what, edit) => {
    const committed = readFileSync(SKILL, "utf8");
    const edited = edit(committed);
    expect(edited).not.toBe(committed);
    const copy = join(dir, "edited.md");
    writeFileSync(copy, edited);
    const r = run("--check", "--file", copy);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/differs from what scripts\/skill-generate\.mjs generates \(first at line \d+\)/);
    expect(r.stderr).toMatch(/npm run skill:generate/);
  });

  it("refuses a skill.md without its markers", () => {
    const copy = join(dir, "nomarkers.md");
    writeFileSync(copy, readFileSync(SKILL, "utf8").replace("<!-- generated:limits -->", ""));
    const r = run("--check", "--file", copy);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/lacks the block <!-- generated:limits -->/);
  });
});
