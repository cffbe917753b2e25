import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../support/system.js";

/**
 * Tables the schema declares with options of its own, written by proto/scripts/option-tables.mjs:
 * the caller policy on each rpc (`option (aps.options.v1.caller_policy)`,
 * docs/design/services.md#caller-policy-and-internal-trust) and the event catalogue on each event message
 * of its publisher's .proto (`option (aps.options.v1.event_subject)`, docs/design/events.md#catalogue).
 * A declaration missing or off the rule fails the generation by name; a changed declaration changes
 * the table.
 */
const SCRIPT = join(ROOT, "proto/scripts/option-tables.mjs");
const TABLE = "src/gen/option-tables.ts";

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

  it("writes the committed table from the schema as it is", () => {
    const r = run();
    expect([r.status, r.stderr]).toEqual([0, ""]);
    expect(readFileSync(join(dir, TABLE), "utf8")).toBe(readFileSync(join(ROOT, "proto", TABLE), "utf8"));
  });

  it("fails naming an event whose subject is off <its file's service>.<snake_case name>", () => {
    edit("forum/v1/forum.proto", `"forum.vote_cast"`, `"forum.votes_cast"`);
    edit("identity/v1/identity.proto", `"identity.agent_joined"`, `"billing.agent_joined"`);
    edit("council/v1/council.proto", `"council.links_set"`, `"forum.links_set"`);
    const r = run();
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('aps.forum.v1.VoteCast: subject "forum.votes_cast" is not forum.vote_cast');
    expect(r.stderr).toContain(
      'aps.identity.v1.AgentJoined: subject "billing.agent_joined" is not identity.agent_joined',
    );
    expect(r.stderr).toContain('aps.council.v1.LinksSet: subject "forum.links_set" is not council.links_set');
  });

  it("lists a message as an event by its subject alone, and a moved event under its new service", () => {
    edit("council/v1/council.proto", `  option (aps.options.v1.event_subject) = "council.links_set";\n`, "");
    const knowledge = readFileSync(join(dir, "aps/knowledge/v1/knowledge.proto"), "utf8");
    const block = /\nmessage PostIndexed \{[^}]*\}\n/.exec(knowledge)![0];
    edit("knowledge/v1/knowledge.proto", block, "\n");
    edit(
      "forum/v1/forum.proto",
      "\nmessage AuthorRef {",
      `${block.replace("knowledge.post_indexed", "forum.post_indexed")}\nmessage AuthorRef {`,
    );
    expect(run().status).toBe(0);
    const table = readFileSync(join(dir, TABLE), "utf8");
    expect(table).toContain('"forum.post_indexed": forum.PostIndexed,');
    expect(table).toContain("  PostIndexed: forum.PostIndexed,");
    expect(table).not.toContain("knowledge.post_indexed");
    expect(table).not.toMatch(/links_set|LinksSet/);
  });

  it("lists each event's public types and their union; fails naming a type off <noun>.<verb> or on a message that is no event", () => {
    edit(
      "council/v1/council.proto",
      `option (aps.options.v1.public_types) = "council.review_due";`,
      `option (aps.options.v1.public_types) = "council.review_reminder";`,
    );
    expect(run().status).toBe(0);
    const table = readFileSync(join(dir, TABLE), "utf8");
    expect(table).toContain(`"council.review_due": ["council.review_reminder"],`);
    expect(table).toContain(`  "council.review_reminder",\n`);
    expect(table).not.toContain(`  "council.review_due",\n`);

    edit("council/v1/council.proto", `"council.review_reminder"`, `"Council.ReviewDue"`);
    edit(
      "council/v1/council.proto",
      "message Ballot {\n",
      `message Ballot {\n  option (aps.options.v1.public_types) = "ballot.cast";\n`,
    );
    const r = run();
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('aps.council.v1.ReviewDue: public type "Council.ReviewDue" is not <noun>.<verb>');
    expect(r.stderr).toContain("aps.council.v1.Ballot declares public types but no event subject");
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
    expect(readFileSync(join(dir, TABLE), "utf8")).toContain('withdrawPost: ["council", "gateway"],');
  });
});
