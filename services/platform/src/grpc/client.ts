import { credentials, Metadata, type CallOptions, type Client, type ServiceError } from "@grpc/grpc-js";
import { fromServiceError } from "../errors.js";

/** A generated client method in callback style. */
type UnaryMethod<Req, Res> = (req: Req, metadata: Metadata, options: Partial<CallOptions>, cb: (err: ServiceError | null, res: Res) => void) => unknown;

/** Default deadline of every service-to-service call, ms (10 s: the embedded database serialises every query of a service, so a burst of writes queues). */
export const DEFAULT_DEADLINE_MS = 10_000;

/**
 * Calls one unary method with a deadline (`deadlineMs`, default 10 000 ms) and turns failures into
 * ApsError (stable code preserved; connection failures → `upstream_unavailable`).
 */
export function callUnary<Req, Res>(client: Client, method: UnaryMethod<Req, Res>, req: Req, deadlineMs = DEFAULT_DEADLINE_MS): Promise<Res> {
  return new Promise((resolve, reject) => {
    method.call(client, req, new Metadata(), { deadline: Date.now() + deadlineMs }, (err, res) => (err ? reject(fromServiceError(err)) : resolve(res)));
  });
}

/** Insecure channel credentials for in-cluster gRPC (see startGrpcServer). */
export const insecure = () => credentials.createInsecure();
