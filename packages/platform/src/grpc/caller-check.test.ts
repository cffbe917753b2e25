import { randomBytes } from "node:crypto";
import { Metadata, status as GrpcStatus } from "@grpc/grpc-js";
import { AUTHORIZATION_METADATA_KEY, CALLER_METADATA_KEY, parsePeerDigests, tokenDigest } from "./caller-auth.js";
import { checkCaller } from "./caller-check.js";

/**
 * Rotating an internal token without an UNAUTHENTICATED window (docs/operations/secrets.md):
 * a server's APS_PEER_DIGESTS may name a caller twice — its old and its new token's digests —
 * and accepts either, so the callers can switch tokens one pod at a time.
 */
const IDENTITY = "aps.identity.v1.IdentityService";
const token = () => randomBytes(32).toString("hex");
const hex = (t: string) => tokenDigest(t).toString("hex");
const call = (caller: string, t: string) => {
  const md = new Metadata();
  md.set(CALLER_METADATA_KEY, caller);
  md.set(AUTHORIZATION_METADATA_KEY, `Bearer ${t}`);
  return md;
};

describe("APS_PEER_DIGESTS with a token in rotation", () => {
  it("accepts the old and the new token of a caller named twice, and refuses any other", () => {
    const [old, next, other] = [token(), token(), token()];
    const verifier = { digests: parsePeerDigests(`gateway=${hex(old)}, council=${hex(other)}, gateway=${hex(next)}`) };
    expect(checkCaller(verifier, IDENTITY, "getAgent", call("gateway", old))).toBeUndefined();
    expect(checkCaller(verifier, IDENTITY, "getAgent", call("gateway", next))).toBeUndefined();
    expect(checkCaller(verifier, IDENTITY, "getAgent", call("gateway", other))?.code).toBe(GrpcStatus.UNAUTHENTICATED);
    expect(checkCaller(verifier, IDENTITY, "getAgent", call("council", other))).toBeUndefined();
    // once the rotation is over, the old token is refused
    const after = { digests: parsePeerDigests(`gateway=${hex(next)}`) };
    expect(checkCaller(after, IDENTITY, "getAgent", call("gateway", old))?.code).toBe(GrpcStatus.UNAUTHENTICATED);
    expect(checkCaller(after, IDENTITY, "getAgent", call("gateway", next))).toBeUndefined();
  });

  it("refuses a caller named a third time, or the same digest twice, naming the caller", () => {
    const [a, b, c] = [token(), token(), token()];
    expect(() => parsePeerDigests(`forum=${hex(a)},forum=${hex(b)},forum=${hex(c)}`)).toThrow(
      /forum named more than 2 times/,
    );
    expect(() => parsePeerDigests(`forum=${hex(a)},forum=${hex(a)}`)).toThrow(/forum has the same digest twice/);
    expect(parsePeerDigests(`forum=${hex(a)},forum=${hex(b)}`).get("forum")).toHaveLength(2);
  });
});
