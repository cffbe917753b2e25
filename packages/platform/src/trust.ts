import { z } from "zod";
import { parsePeerDigests, type CallerIdentity } from "./grpc/caller-auth.js";
import type { CallerVerifier } from "./grpc/caller-check.js";

/**
 * Env of internal trust (docs/design/services.md#caller-policy-and-internal-trust), shared by every service and the
 * gateway: `APS_INTERNAL_TOKEN` — this process's own secret, sent with its gRPC calls (≥ 32
 * characters); `APS_PEER_DIGESTS` — `<caller>=<sha256 hex>,…` of the callers its gRPC server
 * accepts (a caller twice while its token rotates). Both unset (the all-in-one, a developer's loopback) = no caller check, as before.
 */
export const trustEnvSchema = {
  APS_INTERNAL_TOKEN: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v === "" ? undefined : v))
    .refine((v) => v === undefined || v.length >= 32, "APS_INTERNAL_TOKEN must be at least 32 characters"),
  APS_PEER_DIGESTS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return undefined;
      try {
        return parsePeerDigests(v);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
        return z.NEVER;
      }
    }),
};

/** The parsed trust part of a config (see trustEnvSchema). */
export interface TrustConfig {
  APS_INTERNAL_TOKEN?: string | undefined;
  APS_PEER_DIGESTS?: Map<string, Buffer[]> | undefined;
}

/** A process's internal trust: who it is when calling, and whom its gRPC server accepts. */
export interface InternalTrust {
  /** Sent with every gRPC call this process makes; undefined = calls carry nothing. */
  readonly caller?: CallerIdentity | undefined;
  /** Checked on every gRPC call this process serves; undefined = no check. */
  readonly callers?: CallerVerifier | undefined;
}

/** The internal trust of deployable `name` (topology.ts) from its parsed config. */
export function internalTrustOf(name: string, cfg: TrustConfig): InternalTrust {
  return {
    caller: cfg.APS_INTERNAL_TOKEN ? { name, token: cfg.APS_INTERNAL_TOKEN } : undefined,
    callers: cfg.APS_PEER_DIGESTS ? { digests: cfg.APS_PEER_DIGESTS } : undefined,
  };
}
