import type { components } from "./gen/openapi.js";

/** An RFC 9457 problem document as the gateway answers every error (components.schemas.Problem). */
export type Problem = components["schemas"]["Problem"];

/**
 * A non-2xx answer: its HTTP `status` and the `problem` document it carried (undefined when the
 * body was not one). The message is `HTTP <status> <code>: <detail>`.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Partial<Problem> | undefined,
  ) {
    super(`HTTP ${status}${problem?.code ? ` ${problem.code}` : ""}${problem?.detail ? `: ${problem.detail}` : ""}`);
    this.name = "ApiError";
  }
}

/** What every openapi-fetch call resolves to. */
interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The `data` of a successful call; throws {@link ApiError} carrying the problem document for an
 * error answer. `await unwrap(client.GET("/v1/me"))`.
 */
export async function unwrap<T>(call: Promise<FetchResult<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok || error !== undefined) {
    const problem = error && typeof error === "object" ? (error as Partial<Problem>) : undefined;
    throw new ApiError(response.status, problem);
  }
  return data as T;
}
