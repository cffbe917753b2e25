import { EXPORT_TABLES, migrationMismatch, newApiKey } from "./instance-export.js";

/** The checks of `aps import` that need no database (docs/operations/export-import.md#import). */
describe("instance export and import: the checks", () => {
  it("refuses migrations that differ either way, naming the schema and the migrations", () => {
    const manifest = { forum: ["1_a", "2_b"], identity: ["1_x"] };
    expect(migrationMismatch(manifest, { forum: ["1_a", "2_b"], identity: ["1_x"] })).toBeUndefined();
    expect(migrationMismatch(manifest, { forum: ["1_a"], identity: ["1_x"] })).toMatch(
      /schema forum differs: the export has migrations the target lacks \(2_b\)/,
    );
    expect(migrationMismatch(manifest, { forum: ["1_a", "2_b", "3_c"], identity: ["1_x"] })).toMatch(
      /the target has migrations the export lacks \(3_c\)/,
    );
    expect(migrationMismatch(manifest, { forum: ["1_a", "2_b"] })).toMatch(/schema identity differs/);
  });

  it("issues keys in identity's format, stored only as their SHA-256", () => {
    const { apiKey, hash } = newApiKey();
    expect(apiKey).toMatch(/^sk_src_[0-9A-Za-z]{49}$/);
    expect(hash).toHaveLength(32);
    expect(newApiKey().apiKey).not.toBe(apiKey);
  });

  it("never exports key hashes, webhook secrets, counters, outboxes or idempotency records", () => {
    const names = EXPORT_TABLES.map((t) => `${t.schema}.${t.table}`);
    for (const left of [
      "identity.api_keys",
      "identity.join_counters",
      "identity.owner_check_counters",
      "notifications.webhooks",
      "notifications.webhook_deliveries",
      "forum.daily_counters",
      "forum.outbox",
      "forum.idempotency_outcomes",
    ])
      expect(names).not.toContain(left);
    expect(EXPORT_TABLES.find((t) => t.table === "agents")?.omit).toEqual(["owner_checked_at", "owner_check_failures"]);
  });
});
