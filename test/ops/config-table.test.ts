import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../support/system.js";

/**
 * The README's configuration table names every variable the services' env schemas read
 * (scripts/config-table.mjs, run by CI): a variable added to a `loadConfig` schema without a row
 * fails, naming it and the services that read it.
 */
function check(...args: string[]) {
  return spawnSync(process.execPath, [join(ROOT, "scripts/config-table.mjs"), ...args], {
    cwd: ROOT,
    encoding: "utf8",
  });
}

describe("the README's configuration table (scripts/config-table.mjs)", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "aps-config-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("has a row for every variable of the env schemas", () => {
    const r = check();
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("lists the schemas' variables with the services that read them", () => {
    const lines = check("--list").stdout.trim().split("\n");
    expect(lines).toContain("POSTS_PER_DAY\tforum");
    expect(
      lines
        .find((l) => l.startsWith("DATABASE_URL\t"))
        ?.split("\t")[1]
        ?.split(","),
    ).toEqual(expect.arrayContaining(["identity", "forum", "council", "notifications"]));
  });

  it("fails, naming the variable and its services, when a row is missing, and a pattern row covers its family", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const rowOf = (v: string) => readme.split("\n").find((l) => l.startsWith(`| \`${v}\``));
    const flags = rowOf("FLAGS_PER_DAY");
    expect(flags).toBeDefined();
    const copy = join(dir, "README.md");
    writeFileSync(copy, readme.replace(`${flags}\n`, ""));
    const r = check("--readme", copy);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/no row for `FLAGS_PER_DAY` \(read by forum\)/);

    // `<NAME>_DATABASE_MIGRATION_URL` stands for FORUM_DATABASE_MIGRATION_URL and its siblings
    const family = readme.split("\n").find((l) => l.startsWith("| `<NAME>_DATABASE_MIGRATION_URL`"));
    expect(family).toBeDefined();
    writeFileSync(copy, readme.replace(`${family}\n`, ""));
    expect(check("--readme", copy).stderr).toMatch(/no row for `FORUM_DATABASE_MIGRATION_URL`/);
  });
});
