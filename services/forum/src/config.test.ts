import { forumLimits, loadConfig } from "./config.js";

describe("forum loadConfig(env)", () => {
  it("applies the documented defaults (docs/design/edge.md#request-path)", () => {
    const c = loadConfig({});
    expect(c.FORUM_LISTEN_ADDR).toBe("0.0.0.0:50052");
    expect(c.POSTS_PER_DAY).toBe(20);
    expect(c.COMMENTS_PER_DAY).toBe(200);
    expect(c.NATS_STREAM).toBe("APS");
    expect(c.APS_SUBJECT_PREFIX).toBe("aps");
  });

  it("reads overrides and rejects non-integers", () => {
    expect(loadConfig({ POSTS_PER_DAY: "3", FORUM_DATABASE_URL: "postgres://x/y" })).toMatchObject({
      POSTS_PER_DAY: 3,
      databaseUrl: "postgres://x/y",
    });
    expect(() => loadConfig({ POSTS_PER_DAY: "2.5" })).toThrow(/POSTS_PER_DAY/);
    expect(() => loadConfig({ APS_SUBJECT_PREFIX: "Bad Prefix" })).toThrow(/APS_SUBJECT_PREFIX/);
  });

  it("FLAG_HIDE_THRESHOLD: default 3, an integer ≥ 1 (docs/design/identity-and-abuse.md#community-flags)", () => {
    expect(loadConfig({}).FLAG_HIDE_THRESHOLD).toBe(3);
    expect(loadConfig({ FLAG_HIDE_THRESHOLD: "5" }).FLAG_HIDE_THRESHOLD).toBe(5);
    expect(() => loadConfig({ FLAG_HIDE_THRESHOLD: "0" })).toThrow(/FLAG_HIDE_THRESHOLD/);
    expect(() => loadConfig({ FLAG_HIDE_THRESHOLD: "two" })).toThrow(/FLAG_HIDE_THRESHOLD/);
  });

  it("MENTIONS_PER_SOURCE_PER_DAY: default 200, at least one comment's mentions, into the limits (docs/design/notifications.md#mentions)", () => {
    expect(forumLimits(loadConfig({})).mentionsPerSourcePerDay).toBe(200);
    expect(forumLimits(loadConfig({ MENTIONS_PER_SOURCE_PER_DAY: "30" })).mentionsPerSourcePerDay).toBe(30);
    expect(forumLimits(loadConfig({})).mentionsPerAgentPerDay).toBe(50);
    expect(forumLimits(loadConfig({ MENTIONS_PER_AGENT_PER_DAY: "12" })).mentionsPerAgentPerDay).toBe(12);
    expect(() => loadConfig({ MENTIONS_PER_AGENT_PER_DAY: "9" })).toThrow(/MENTIONS_PER_AGENT_PER_DAY/);
    expect(() => loadConfig({ MENTIONS_PER_SOURCE_PER_DAY: "9" })).toThrow(/MENTIONS_PER_SOURCE_PER_DAY/);
  });

  it("FLAGS_PER_DAY: default 20, an integer ≥ 1, passed to the limits (docs/design/identity-and-abuse.md#community-flags)", () => {
    expect(loadConfig({}).FLAGS_PER_DAY).toBe(20);
    expect(forumLimits(loadConfig({ FLAGS_PER_DAY: "5" })).flagsPerDay).toBe(5);
    expect(() => loadConfig({ FLAGS_PER_DAY: "0" })).toThrow(/FLAGS_PER_DAY/);
    expect(() => loadConfig({ FLAGS_PER_DAY: "many" })).toThrow(/FLAGS_PER_DAY/);
  });

  it("EDITS_PER_DAY and MAX_REVISIONS: defaults 50 and 50, into the forum's limits (docs/design/identity-and-abuse.md#budgets-per-source)", () => {
    expect(forumLimits(loadConfig({}))).toMatchObject({ editsPerDay: 50, maxRevisions: 50 });
    expect(forumLimits(loadConfig({ EDITS_PER_DAY: "4", MAX_REVISIONS: "3" }))).toMatchObject({
      editsPerDay: 4,
      maxRevisions: 3,
    });
    expect(() => loadConfig({ EDITS_PER_DAY: "0" })).toThrow(/EDITS_PER_DAY/);
    expect(() => loadConfig({ MAX_REVISIONS: "1" })).toThrow(/MAX_REVISIONS/);
  });
});
