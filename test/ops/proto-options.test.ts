import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../support/system.js";

/**
 * Tables the schema declares with options of its own, written by proto/scripts/option-tables.mjs:
 * the caller policy on each rpc (`option (aps.options.v1.caller_policy)`,
 * docs/design/services.md#caller-policy-and-internal-trust) and the event catalogue on each event message
 * (`option (aps.options.v1.event_subject)`, docs/design/events.md#catalogue). A declaration missing or
 * off the rule fails the generation by name; a changed declaration changes the table.
 */
const SCRIPT = join(ROOT, "proto/scripts/option-tables.mjs");
const EVENTS = "events/v1/events.proto";

describe("proto/scripts/option-tables.mjs", () => {
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

  it("writes the committed tables from the schema as it is", () => {
    const r = run();
    expect([r.status, r.stderr]).toEqual([0, ""]);
    for (const table of ["caller-policy.ts", "event-catalogue.ts"])
      expect(readFileSync(join(dir, "src/gen", table), "utf8")).toBe(
        readFileSync(join(ROOT, "proto/src/gen", table), "utf8"),
      );
  });

  it("fails naming an event message without a subject, or with one off <service>.<snake_case name>", () => {
    edit(EVENTS, `  option (aps.options.v1.event_subject) = "council.links_set";\n`, "");
    edit(EVENTS, `"forum.vote_cast"`, `"forum.votes_cast"`);
    edit(EVENTS, `"identity.agent_joined"`, `"billing.agent_joined"`);
    const r = run();
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("aps.events.v1.LinksSet declares no subject");
    expect(r.stderr).toContain('aps.events.v1.VoteCast: subject "forum.votes_cast" is not <service>.vote_cast');
    expect(r.stderr).toContain(
      'aps.events.v1.AgentJoined: subject "billing.agent_joined" is not <service>.agent_joined',
    );
  });

  it("writes a moved event under its new service", () => {
    edit(EVENTS, `"knowledge.post_indexed"`, `"forum.post_indexed"`);
    expect(run().status).toBe(0);
    const table = readFileSync(join(dir, "src/gen/event-catalogue.ts"), "utf8");
    expect(table).toContain('"forum.post_indexed": events.PostIndexed,');
    expect(table).not.toContain("knowledge.post_indexed");
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
