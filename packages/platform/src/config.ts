import { z } from "zod";

/**
 * Parses `env` against a zod schema and returns the typed config. Throws one Error listing every
 * offending variable (name and reason), so a misconfigured process fails fast at start-up.
 * Config is never parsed at import time: each service calls its own `loadConfig(env)`.
 */
export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.infer<S> {
  const r = schema.safeParse(env);
  if (r.success) return r.data;
  const lines = r.error.issues.map((i) => `  ${i.path.join(".") || "(env)"}: ${i.message}`);
  throw new Error(`invalid configuration:\n${lines.join("\n")}`);
}

/** An integer env var with a default (`z.coerce`; rejects non-integers and values below `min`). */
export function intVar(def: number, min = 0) {
  return z.coerce.number().int().min(min).default(def);
}

/** An optional non-empty string env var ("" counts as unset). */
export function optionalVar() {
  return z
    .string()
    .optional()
    .transform((v) => (v === undefined || v === "" ? undefined : v));
}

/** `host:port`, optionally behind `dns:`, `dns:///`, `dns://<authority>/`, `ipv4:` or `ipv6:`, several comma-separated. */
const GRPC_TARGET = /^(?:dns:(?:\/\/[\w.\-:]*\/)?|ipv4:|ipv6:)?[\w.\-:[\]]+:\d+(?:,[\w.\-:[\]]+:\d+)*$/;

/**
 * A gRPC listen or dial address: `host:port` such as `127.0.0.1:50051` or `0.0.0.0:0`, or a gRPC
 * target in the standard name syntax — `dns:///aps-forum:50052` (a headless Service: every pod's
 * address, the chart) or `ipv4:127.0.0.1:50052,127.0.0.1:50053` (several replicas,
 * `npm run start:distributed`); the clients spread calls over them round_robin (docs/design/services.md#balancing-and-connection-age, docs/design/operations.md#local-replicas).
 */
export const grpcAddr = (def: string) =>
  z.string().regex(GRPC_TARGET, "expected host:port, dns:///host:port or ipv4:host:port,host:port").default(def);
