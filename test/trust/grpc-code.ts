import { status as GrpcStatus } from "@grpc/grpc-js";
import { ApsError } from "@aps/platform";

/**
 * The gRPC status a typed client's call ended with: OK when `p` resolves, else the code of the
 * ServiceError under the ApsError (fromServiceError keeps it as `cause`), -1 when there is none.
 * Rethrows anything that is not an ApsError.
 */
export async function grpcCode(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return GrpcStatus.OK;
  } catch (err) {
    if (!(err instanceof ApsError)) throw err;
    return (err.cause as { code?: number } | undefined)?.code ?? -1;
  }
}
