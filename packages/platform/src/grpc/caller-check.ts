import { timingSafeEqual } from "node:crypto";
import { Metadata, status as GrpcStatus, type handleUnaryCall, type UntypedServiceImplementation } from "@grpc/grpc-js";
import { grpcHandled } from "../metrics.js";
import { AUTHORIZATION_METADATA_KEY, CALLER_METADATA_KEY, tokenDigest } from "./caller-auth.js";
import { allowedCallers } from "./caller-policy.js";

/**
 * Internal trust, the server's side (docs/design/services.md#caller-policy-and-internal-trust): a gRPC server with a
 * verifier answers a call only when its `aps-caller` is a known caller, its bearer token hashes
 * to that caller's digest (compared in constant time) and CALLER_POLICY allows that caller the
 * method. The in-process transport of the all-in-one is not checked (one process, no network).
 */

/**
 * The callers a server accepts: deployable name → SHA-256 of its token (`APS_PEER_DIGESTS`); two
 * while its token rotates (either one is accepted).
 */
export interface CallerVerifier {
  readonly digests: ReadonlyMap<string, readonly Buffer[]>;
}

/** Why a call is refused: its gRPC status and a detail naming no secret. */
export interface CallerRefusal {
  code: GrpcStatus.UNAUTHENTICATED | GrpcStatus.PERMISSION_DENIED;
  details: string;
}

/**
 * Checks one call's `metadata` for `method` (key) of `service` (full name). Undefined = allowed;
 * UNAUTHENTICATED when the caller or token is missing, unknown or wrong; PERMISSION_DENIED when a
 * genuine caller is not declared for the method (CALLER_POLICY).
 */
export function checkCaller(
  verifier: CallerVerifier,
  service: string,
  method: string,
  metadata: Metadata,
): CallerRefusal | undefined {
  const caller = metadata.get(CALLER_METADATA_KEY)[0];
  const auth = metadata.get(AUTHORIZATION_METADATA_KEY)[0];
  if (typeof caller !== "string" || typeof auth !== "string" || !auth.startsWith("Bearer "))
    return { code: GrpcStatus.UNAUTHENTICATED, details: "caller credentials required" };
  const expected = verifier.digests.get(caller) ?? [];
  // Hash first: equal lengths for timingSafeEqual, and the time does not depend on the token;
  // every digest of the caller is compared (no early exit), so neither does it depend on which matched.
  const presented = tokenDigest(auth.slice("Bearer ".length));
  let matched = false;
  for (const d of expected) matched = timingSafeEqual(presented, d) || matched;
  if (!matched) return { code: GrpcStatus.UNAUTHENTICATED, details: "caller credentials rejected" };
  if (!allowedCallers(service, method).includes(caller))
    return { code: GrpcStatus.PERMISSION_DENIED, details: `${caller} may not call ${method}` };
  return undefined;
}

/**
 * Wraps every handler of `implementation` (service `service`, full name) with checkCaller: a
 * refused call is answered with its status (counted in `aps_grpc_server_handled_total`) and never
 * reaches the handler. Returns a new implementation object; `implementation` is unchanged.
 */
export function guardImplementation(
  service: string,
  implementation: UntypedServiceImplementation,
  verifier: CallerVerifier,
): UntypedServiceImplementation {
  const out: UntypedServiceImplementation = {};
  for (const [method, handler] of Object.entries(implementation)) {
    const inner = handler as handleUnaryCall<unknown, unknown>;
    const guarded: handleUnaryCall<unknown, unknown> = (call, callback) => {
      const refusal = checkCaller(verifier, service, method, call.metadata);
      if (!refusal) return inner(call, callback);
      grpcHandled.inc({ method: call.getPath(), code: String(refusal.code) });
      callback({ ...refusal, metadata: new Metadata() });
    };
    out[method] = guarded;
  }
  return out;
}
