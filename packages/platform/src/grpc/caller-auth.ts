import { createHash } from "node:crypto";

/**
 * Internal trust, the caller's side (docs/design/services.md#caller-policy-and-internal-trust): every gRPC call a service
 * makes carries who it is (`aps-caller: <service>`) and its secret (`authorization: Bearer
 * <token>`, callerMiddleware in middleware.ts); the called server checks both against its declared callers (caller-check.ts).
 */

/** Metadata key naming the calling deployable (`gateway`, `council`, …). */
export const CALLER_METADATA_KEY = "aps-caller";
/** Metadata key carrying the caller's token as `Bearer <token>`. */
export const AUTHORIZATION_METADATA_KEY = "authorization";

/** Who this process is when it calls another service: its deployable name and its secret token. */
export interface CallerIdentity {
  /** Deployable name (packages/platform/src/topology.ts), e.g. `gateway`. */
  readonly name: string;
  /** Its secret (`APS_INTERNAL_TOKEN`), ≥ 32 characters; never logged. */
  readonly token: string;
}

/** SHA-256 of `token` (32 bytes): what a server keeps of a caller's token (`APS_PEER_DIGESTS`). */
export function tokenDigest(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

/** Most digests one caller may have at once: the current token's and, while it rotates, the next one's. */
export const MAX_DIGESTS_PER_CALLER = 2;

/**
 * Parses `APS_PEER_DIGESTS`: comma-separated `<caller>=<sha256 hex of its token>` (whitespace
 * around entries ignored). A caller may be named twice (MAX_DIGESTS_PER_CALLER): the digests of
 * its old and its new token while the token rotates, so no call is refused in between
 * (docs/operations/secrets.md "Rotating an internal token"). Returns caller → its digests (32
 * bytes each). Throws on a malformed entry, a caller named a third time or the same digest twice.
 */
export function parsePeerDigests(text: string): Map<string, Buffer[]> {
  const out = new Map<string, Buffer[]>();
  for (const entry of text.split(",").map((s) => s.trim())) {
    if (entry === "") continue;
    const m = /^([a-z][a-z0-9-]*)=([0-9a-fA-F]{64})$/.exec(entry);
    if (!m) throw new Error("APS_PEER_DIGESTS: expected <caller>=<64 hex digits>, comma-separated");
    const [, name, hex] = m as unknown as [string, string, string];
    const digest = Buffer.from(hex, "hex");
    const known = out.get(name) ?? [];
    if (known.length >= MAX_DIGESTS_PER_CALLER)
      throw new Error(
        `APS_PEER_DIGESTS: ${name} named more than ${MAX_DIGESTS_PER_CALLER} times (its old and new token)`,
      );
    if (known.some((d) => d.equals(digest))) throw new Error(`APS_PEER_DIGESTS: ${name} has the same digest twice`);
    out.set(name, [...known, digest]);
  }
  return out;
}
