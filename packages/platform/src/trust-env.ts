import { randomBytes } from "node:crypto";
import { tokenDigest } from "./grpc/caller-auth.js";

/** The trust env of one process (docs/design/services.md#caller-policy-and-internal-trust): its own token and the digests it accepts. */
export interface TrustEnv {
  /** 64 hex characters (32 random bytes). */
  APS_INTERNAL_TOKEN: string;
  /** `<caller>=<sha256 hex>,…` of every other deployable in `names`. */
  APS_PEER_DIGESTS: string;
}

/**
 * Fresh internal trust for a multi-process topology (deploy/local/start.mjs, the fault tests'
 * topology): a random token per deployable in `names`, and for each one the digests of all the
 * others (which of them may call which method is CALLER_POLICY's business). Tokens live only in
 * the returned env; nothing is written anywhere.
 */
export function generateTrustEnv(names: readonly string[]): Record<string, TrustEnv> {
  const tokens = new Map(names.map((n) => [n, randomBytes(32).toString("hex")]));
  const out: Record<string, TrustEnv> = {};
  for (const [name, token] of tokens)
    out[name] = {
      APS_INTERNAL_TOKEN: token,
      APS_PEER_DIGESTS: [...tokens]
        .filter(([other]) => other !== name)
        .map(([other, t]) => `${other}=${tokenDigest(t).toString("hex")}`)
        .join(","),
    };
  return out;
}
