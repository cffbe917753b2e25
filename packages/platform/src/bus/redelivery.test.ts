import { Metadata, status } from "@grpc/grpc-js";
import { ApsError } from "../errors.js";
import {
  backoffMs,
  classifyFailure,
  decideRedelivery,
  DEFAULT_REDELIVERY,
  PoisonEventError,
  type RedeliveryPolicy,
} from "./redelivery.js";
import { IN_PROCESS_REDELIVERY } from "./memory.js";
import { events } from "@aps/proto";

/** Classification and backoff of failed deliveries (docs/design/events.md#redelivery). */
describe("redelivery decisions", () => {
  const policy: RedeliveryPolicy = { baseDelayMs: 1_000, maxDelayMs: 60_000, maxDeliver: 20 };

  it("classifies outage errors as transient: gRPC UNAVAILABLE, refused sockets, PostgreSQL shutdown, pool timeouts, upstream_unavailable", () => {
    const grpc = Object.assign(new Error("14 UNAVAILABLE: No connection established"), {
      code: status.UNAVAILABLE,
      details: "x",
      metadata: new Metadata(),
    });
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    const shutdown = Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" });
    for (const e of [
      grpc,
      refused,
      shutdown,
      new Error("timeout exceeded when trying to connect"),
      new ApsError("upstream_unavailable", "down", 1),
    ]) {
      expect([e.message, classifyFailure(e)]).toEqual([e.message, "transient"]);
    }
  });

  it("classifies the event's own faults as poison: PoisonEventError, undecodable protobuf, invalid_request, SQLSTATE 22/23", () => {
    let decode: unknown;
    try {
      events.CaseClosed.decode(new Uint8Array([0xff, 0xff, 0xff]));
    } catch (err) {
      decode = err;
    }
    expect(decode).toBeDefined();
    const check = Object.assign(new Error("violates check constraint"), { code: "23514" });
    for (const e of [new PoisonEventError("bad"), decode, new ApsError("invalid_request", "bad id"), check])
      expect(classifyFailure(e)).toBe("poison");
    expect(classifyFailure(new Error("wrapped", { cause: new PoisonEventError("inner") }))).toBe("poison");
  });

  it("leaves other errors unknown", () => {
    expect(classifyFailure(new TypeError("x is undefined"))).toBe("unknown");
    expect(classifyFailure("a string")).toBe("unknown");
  });

  it("uses the published backoffs: JetStream 1 s doubling to 60 s, in-process 250 ms to 30 s (docs/reliability.md)", () => {
    expect(DEFAULT_REDELIVERY).toMatchObject({ baseDelayMs: 1_000, maxDelayMs: 60_000 });
    expect(IN_PROCESS_REDELIVERY).toMatchObject({ baseDelayMs: 250, maxDelayMs: 30_000 });
    expect([1, 2, 3, 8, 9].map((n) => backoffMs(n, IN_PROCESS_REDELIVERY))).toEqual([250, 500, 1_000, 30_000, 30_000]);
  });

  it("backs off exponentially from the base to the cap", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 100].map((n) => backoffMs(n, policy))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000,
    ]);
  });

  it("retries transient failures without limit, parks poison at once and unknown failures after maxDeliver", () => {
    const down = new ApsError("upstream_unavailable", "down", 1);
    expect(decideRedelivery(down, 10_000, policy)).toEqual({ action: "retry", delayMs: 60_000, kind: "transient" });
    expect(decideRedelivery(new PoisonEventError("bad"), 1, policy)).toEqual({ action: "park", kind: "poison" });
    expect(decideRedelivery(new Error("bug"), 19, policy)).toMatchObject({ action: "retry" });
    expect(decideRedelivery(new Error("bug"), 20, policy)).toEqual({ action: "park", kind: "unknown" });
  });
});
