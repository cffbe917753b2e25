import { parseEnv } from "./config.js";
import { commonEnvSchema, databaseOptionsOf, MIN_ACK_WAIT_MS } from "./runtime.js";
import { DEFAULT_ACK_WAIT_MS, fetchBatchSize } from "./bus/jetstream.js";

/** The shared env schema of every service (`loadConfig(env)` extends it): the JetStream ack wait (docs/adr/0146). */
describe("commonEnvSchema: NATS_ACK_WAIT_MS", () => {
  it("defaults to 30 000 ms, JetStream's own default", () => {
    expect(parseEnv(commonEnvSchema, {}).NATS_ACK_WAIT_MS).toBe(30_000);
    expect(DEFAULT_ACK_WAIT_MS).toBe(30_000);
  });

  it("reads an integer of at least 1 000 ms", () => {
    expect(parseEnv(commonEnvSchema, { NATS_ACK_WAIT_MS: "2500" }).NATS_ACK_WAIT_MS).toBe(2_500);
    expect(parseEnv(commonEnvSchema, { NATS_ACK_WAIT_MS: String(MIN_ACK_WAIT_MS) }).NATS_ACK_WAIT_MS).toBe(1_000);
  });

  it.each(["999", "0", "-5", "2.5", "soon"])("rejects %j, naming the variable", (v) => {
    expect(() => parseEnv(commonEnvSchema, { NATS_ACK_WAIT_MS: v })).toThrow(/NATS_ACK_WAIT_MS/);
  });
});

describe("fetchBatchSize(ackWaitMs)", () => {
  it("keeps 64 events per pull with the default ack wait, fewer with a short one, never 0", () => {
    expect(fetchBatchSize(30_000)).toBe(64);
    expect(fetchBatchSize(6_400)).toBe(64);
    expect(fetchBatchSize(3_000)).toBe(30);
    expect(fetchBatchSize(1_000)).toBe(10);
    expect(fetchBatchSize(50)).toBe(1);
  });
});

describe("commonEnvSchema: NATS_STREAM_REPLICAS (issue 31 item 3, docs/adr/0168)", () => {
  it("defaults to 1 and reads 1–5", () => {
    expect(parseEnv(commonEnvSchema, {}).NATS_STREAM_REPLICAS).toBe(1);
    expect(parseEnv(commonEnvSchema, { NATS_STREAM_REPLICAS: "3" }).NATS_STREAM_REPLICAS).toBe(3);
    for (const v of ["0", "6", "2.5", "three"])
      expect(() => parseEnv(commonEnvSchema, { NATS_STREAM_REPLICAS: v })).toThrow(/NATS_STREAM_REPLICAS/);
  });
});

describe("commonEnvSchema: the database options (issue 31 item 6, docs/adr/0169)", () => {
  it("DATABASE_POOL_MAX defaults to 5 (≥ 1), DATABASE_POOLER to none, DATABASE_MIGRATION_URL to unset", () => {
    const d = parseEnv(commonEnvSchema, {});
    expect([d.DATABASE_POOL_MAX, d.DATABASE_POOLER, d.DATABASE_MIGRATION_URL]).toEqual([5, "none", undefined]);
    expect(() => parseEnv(commonEnvSchema, { DATABASE_POOL_MAX: "0" })).toThrow(/DATABASE_POOL_MAX/);
    expect(() => parseEnv(commonEnvSchema, { DATABASE_POOLER: "session" })).toThrow(/DATABASE_POOLER/);
  });

  it("databaseOptionsOf hands them to openDatabase", () => {
    const cfg = parseEnv(commonEnvSchema, {
      DATABASE_POOL_MAX: "12",
      DATABASE_POOLER: "transaction",
      DATABASE_MIGRATION_URL: "postgres://direct/db",
    });
    expect(databaseOptionsOf(cfg)).toEqual({
      poolSize: 12,
      pooler: "transaction",
      migrationUrl: "postgres://direct/db",
    });
  });
});
