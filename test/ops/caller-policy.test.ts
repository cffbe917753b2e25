import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../support/system.js";

/**
 * The caller policy is declared on each rpc in its .proto (`option (aps.options.v1.caller_policy)`,
 * docs/design/services.md#caller-policy-and-internal-trust), and proto/scripts/caller-policy.mjs writes the table the
 * services check: an rpc without callers, or with a caller that is not a deployable, fails the
 * generation by name; a changed declaration changes the table.
 */
const SCRIPT = join(ROOT, "proto/scripts/caller-policy.mjs");

describe("proto/scripts/caller-policy.mjs", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "aps-policy-"));
    cpSync(join(ROOT, "proto/aps"), join(dir, "aps"), { recursive: true });
    cpSync(join(ROOT, "proto/buf.yaml"), join(dir, "buf.yaml"));
    mkdirSync(join(dir, "src/gen"), { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Replaces `from` (which must occur) by `to` in the schema file `file` (under aps/). */
  const edit = (file: string, from: string, to: string) => {
    const path = join(dir, "aps", file);
    const text = readFileSync(path, "utf8");
    expect(text).toContain(from);
    writeFileSync(path, text.replace(from, to));
  };
  const run = () => spawnSync(process.execPath, [SCRIPT, dir], { encoding: "utf8" });

  it("writes the committed table from the schema as it is", () => {
    const r = run();
    expect([r.status, r.stderr]).toEqual([0, ""]);
    expect(readFileSync(join(dir, "src/gen/caller-policy.ts"), "utf8")).toBe(
      readFileSync(join(ROOT, "proto/src/gen/caller-policy.ts"), "utf8"),
    );
  });

  it("fails naming an rpc that declares no callers", () => {
    edit(
      "forum/v1/forum.proto",
      `    // the council decides a withdrawal (it owns cases) and asks the forum for one without a case
    option (aps.options.v1.caller_policy) = {callers: ["council"]};`,
      "",
    );
    const r = run();
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("aps.forum.v1.ForumService.WithdrawPost declares no callers");
  });

  it("fails naming a caller that is not a deployable, and a changed declaration changes the table", () => {
    const withdraw = `option (aps.options.v1.caller_policy) = {callers: ["council"]};`;
    edit("forum/v1/forum.proto", withdraw, `option (aps.options.v1.caller_policy) = {callers: ["council", "bob"]};`);
    const bad = run();
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('aps.forum.v1.ForumService.WithdrawPost names an unknown caller "bob"');

    edit("forum/v1/forum.proto", `{callers: ["council", "bob"]}`, `{callers: ["council", "gateway"]}`);
    expect(run().status).toBe(0);
    expect(readFileSync(join(dir, "src/gen/caller-policy.ts"), "utf8")).toContain(
      'withdrawPost: ["council", "gateway"],',
    );
  });
});
