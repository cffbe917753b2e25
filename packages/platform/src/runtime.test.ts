import { parseEnv } from "./config.js";
import { commonEnvSchema, databaseOptionsOf, grpcServerTuningOf, MIN_ACK_WAIT_MS } from "./runtime.js";
import { grpcAddr } from "./config.js";
import { CHANNEL_OPTIONS, DEFAULT_DEADLINE_MS } from "./grpc/client.js";
import { POOL_WAIT_MS } from "./db/database.js";
import { DEFAULT_ACK_WAIT_MS, fetchBatchSize } from "./bus/jetstream.js";

/** The shared env schema of every service (`loadConfig(env)` extends it): the JetStream ack wait (docs/design/events.md#jetstream-stream-and-consumers). */
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

describe("commonEnvSchema: NATS_STREAM_REPLICAS (docs/design/events.md#stream-replicas)", () => {
  it("defaults to 1 and reads 1–5", () => {
    expect(parseEnv(commonEnvSchema, {}).NATS_STREAM_REPLICAS).toBe(1);
    expect(parseEnv(commonEnvSchema, { NATS_STREAM_REPLICAS: "3" }).NATS_STREAM_REPLICAS).toBe(3);
    for (const v of ["0", "6", "2.5", "three"])
      expect(() => parseEnv(commonEnvSchema, { NATS_STREAM_REPLICAS: v })).toThrow(/NATS_STREAM_REPLICAS/);
  });
});

describe("commonEnvSchema: the database options (docs/design/operations.md#connection-budget-and-pgbouncer)", () => {
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
      DATABASE_POOL_WAIT_MS: "2500",
      DATABASE_MIGRATIONS: "verify",
      DATABASE_MAX_LIFETIME_SECONDS: "20",
    });
    expect(databaseOptionsOf(cfg)).toEqual({
      poolSize: 12,
      pooler: "transaction",
      migrationUrl: "postgres://direct/db",
      poolWaitMs: 2500,
      migrations: "verify",
      maxLifetimeSeconds: 20,
    });
    expect(parseEnv(commonEnvSchema, {}).DATABASE_MAX_LIFETIME_SECONDS).toBe(0);
    expect(() => parseEnv(commonEnvSchema, { DATABASE_MAX_LIFETIME_SECONDS: "-1" })).toThrow(
      /DATABASE_MAX_LIFETIME_SECONDS/,
    );
  });

  it("DATABASE_MIGRATIONS is apply unless verify is asked; anything else is refused", () => {
    expect(parseEnv(commonEnvSchema, {}).DATABASE_MIGRATIONS).toBe("apply");
    expect(() => parseEnv(commonEnvSchema, { DATABASE_MIGRATIONS: "skip" })).toThrow(/DATABASE_MIGRATIONS/);
  });

  it("GRPC_DEADLINE_MS and DATABASE_POOL_WAIT_MS default to 10 s and 8 s (each ≥ 100 ms)", () => {
    const d = parseEnv(commonEnvSchema, {});
    expect([d.GRPC_DEADLINE_MS, d.DATABASE_POOL_WAIT_MS]).toEqual([DEFAULT_DEADLINE_MS, POOL_WAIT_MS]);
    expect(parseEnv(commonEnvSchema, { GRPC_DEADLINE_MS: "30000" }).GRPC_DEADLINE_MS).toBe(30_000);
    expect(() => parseEnv(commonEnvSchema, { GRPC_DEADLINE_MS: "50" })).toThrow(/GRPC_DEADLINE_MS/);
    expect(() => parseEnv(commonEnvSchema, { DATABASE_POOL_WAIT_MS: "x" })).toThrow(/DATABASE_POOL_WAIT_MS/);
  });
});

describe("balanced gRPC (docs/design/services.md#balancing-and-connection-age)", () => {
  it("GRPC_MAX_CONNECTION_AGE_MS defaults to 5 min (≥ 1 s), its grace to 15 s, handed to startGrpcServer", () => {
    const d = parseEnv(commonEnvSchema, {});
    expect(grpcServerTuningOf(d)).toEqual({ maxConnectionAgeMs: 300_000, maxConnectionAgeGraceMs: 15_000 });
    const c = parseEnv(commonEnvSchema, { GRPC_MAX_CONNECTION_AGE_MS: "60000", GRPC_MAX_CONNECTION_AGE_GRACE_MS: "0" });
    expect(grpcServerTuningOf(c)).toEqual({ maxConnectionAgeMs: 60_000, maxConnectionAgeGraceMs: 0 });
    for (const v of ["999", "-1", "soon"])
      expect(() => parseEnv(commonEnvSchema, { GRPC_MAX_CONNECTION_AGE_MS: v })).toThrow(/GRPC_MAX_CONNECTION_AGE_MS/);
  });

  it("every client channel balances round_robin and re-resolves DNS at most every second (not grpc-js's 30 s: stale addresses through a roll)", () => {
    expect(JSON.parse(CHANNEL_OPTIONS["grpc.service_config"])).toEqual({ loadBalancingConfig: [{ round_robin: {} }] });
    expect(CHANNEL_OPTIONS["grpc.dns_min_time_between_resolutions_ms"]).toBe(1_000);
  });

  it("a *_GRPC_ADDR is host:port or a gRPC target: dns:///host:port, ipv4:a:p,b:p", () => {
    const schema = grpcAddr("127.0.0.1:50052");
    for (const ok of [
      "127.0.0.1:50052",
      "aps-forum:50052",
      "dns:///aps-forum:50052",
      "dns:aps-forum:50052",
      "ipv4:127.0.0.1:50052,127.0.0.1:50053",
      "ipv6:[::1]:50052",
    ])
      expect(schema.parse(ok)).toBe(ok);
    for (const bad of ["forum", "dns:///forum", "http://forum:50052", "127.0.0.1:50052,"])
      expect(schema.safeParse(bad).success).toBe(false);
  });
});
