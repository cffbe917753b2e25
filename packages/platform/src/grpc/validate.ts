import type { z } from "zod";
import { ApsError } from "../errors.js";

/**
 * Validates a gRPC request (or part of it) with `schema`; throws ApsError `invalid_request`
 * naming every bad field. Services re-check what the gateway checked: they trust no caller.
 */
export function parseRequest<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (!r.success)
    throw new ApsError("invalid_request", r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  return r.data;
}
