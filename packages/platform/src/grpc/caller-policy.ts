import { CALLER_POLICY } from "@aps/proto";

/**
 * Which deployable may call which gRPC method (docs/design/services.md#caller-policy-and-internal-trust): each rpc
 * declares its callers in its .proto (`option (aps.options.v1.caller_policy) = {callers: [...]}`),
 * and `npm run generate -w @aps/proto` writes them into one table, keyed by the service's full name,
 * then by the method key of its generated definition (`grantSeat`, …). Generation fails on an rpc
 * without the option, so a new RPC cannot go undeclared; a method missing from the table is
 * refused to everyone when the check is on.
 */
export { CALLER_POLICY };

/** The callers allowed to call `method` (key) of `service` (full name); empty when undeclared. */
export function allowedCallers(service: string, method: string): readonly string[] {
  return CALLER_POLICY[service]?.[method] ?? [];
}
