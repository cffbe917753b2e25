import { status } from "@grpc/grpc-js";
import { ApsError, fromServiceError, isDatabaseUnavailable, toServiceError } from "./errors.js";

describe("errors across a gRPC hop (docs/design/edge.md#request-path codes)", () => {
  it("keeps the stable code and Retry-After through toServiceError → fromServiceError", () => {
    const back = fromServiceError(toServiceError(new ApsError("rate_limited", "slow down", 42)));
    expect(back).toMatchObject({ code: "rate_limited", message: "slow down", retryAfterSeconds: 42 });
  });

  it("answers database outages as upstream_unavailable and other failures as internal without detail", () => {
    for (const e of [
      Object.assign(new Error("sorry, too many clients already"), { code: "53300" }),
      Object.assign(new Error("x"), { code: "57P01" }),
      new Error("timeout exceeded when trying to connect"),
    ]) {
      expect(isDatabaseUnavailable(e)).toBe(true);
      expect(toServiceError(e)).toMatchObject({ code: status.UNAVAILABLE });
      expect(fromServiceError(toServiceError(e)).code).toBe("upstream_unavailable");
    }
    const bug = new TypeError("cannot read properties of undefined");
    expect(isDatabaseUnavailable(bug)).toBe(false);
    expect(toServiceError(bug)).toMatchObject({ code: status.INTERNAL, details: "internal error" });
    expect(isDatabaseUnavailable(Object.assign(new Error("dup"), { code: "23505" }))).toBe(false);
  });
});
