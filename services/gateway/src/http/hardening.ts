import cors from "cors";
import helmet from "helmet";
import type { Request, RequestHandler, Response } from "express";

/**
 * CORS policy (docs/design/edge.md#headers-cors-and-security): any origin may call the API, for
 * the public reads and for writes alike, because authority comes only from the
 * `Authorization: Bearer` key the caller sends itself — no cookies, no ambient credentials, so
 * `Access-Control-Allow-Credentials` is never sent. Preflights answer 204. `If-None-Match` and
 * `ETag` are allowed/exposed so a page can revalidate reads (docs/design/edge.md#read-cache-and-etags);
 * `If-Match` so an edit can name the revision it was made from (docs/reference/editing.md).
 */
export const CORS_ALLOWED_HEADERS = [
  "Authorization",
  "Content-Type",
  "Idempotency-Key",
  "X-Request-Id",
  "If-None-Match",
  "If-Match",
];
/** Every method an operation of the API uses (the OpenAPI document's), plus HEAD for GET. */
export const CORS_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];
export const CORS_EXPOSED_HEADERS = [
  "X-Request-Id",
  "X-Skill-Version",
  "Retry-After",
  "Location",
  "Idempotent-Replayed",
  "Aps-Dry-Run", // a dry run's answer (docs/design/edge.md#dry-run)
  "Aps-Dry-Run-Effects", // what a dry run's write would also do (docs/design/edge.md#dry-run)
  "RateLimit-Policy",
  "RateLimit",
  "ETag",
  "X-Poll-Interval", // seconds to the next check-in (docs/design/agents.md#attention)
];

/**
 * The headers `middleware` sets on a response to `req`, in order, when it answers synchronously:
 * it is run against a recording response. Throws if it does not call `next` synchronously, so a
 * change of the library cannot silently drop headers.
 */
function recordHeaders(middleware: RequestHandler, req: Partial<Request>): [string, string][] {
  const headers: [string, string][] = [];
  let done = false;
  const recorder = {
    setHeader: (name: string, value: string | number | readonly string[]) => void headers.push([name, String(value)]),
    getHeader: (name: string) => headers.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1],
    removeHeader: () => undefined,
  };
  middleware(req as Request, recorder as unknown as Response, () => (done = true));
  if (!done)
    throw new Error("a hardening middleware did not finish synchronously; its headers cannot be computed once");
  return headers;
}

/**
 * helmet's default headers, computed once: helmet's middleware is run against a recording
 * response, and the headers it set are replayed on every response by one function instead of
 * helmet's chain of twelve middlewares (its defaults are static: no per-request nonce).
 */
export function helmetHeaders(): ReadonlyArray<readonly [string, string]> {
  return recordHeaders(helmet(), {});
}

/** Sets helmet's default headers (computed once by `helmetHeaders`). */
function securityHeaders(): RequestHandler {
  const headers = helmetHeaders();
  return (_req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    next();
  };
}

/** The CORS policy above as middleware (preflights answered 204). */
const corsPolicy = cors({
  origin: "*",
  methods: CORS_METHODS,
  allowedHeaders: CORS_ALLOWED_HEADERS,
  exposedHeaders: CORS_EXPOSED_HEADERS,
  credentials: false,
  maxAge: 600,
  optionsSuccessStatus: 204,
});

/**
 * What `hardening` sets on the answer to a `GET`, computed once as a flat `[name, value, …]` list
 * in the order it sets them: helmet's headers, then the CORS headers of a simple request (with
 * `origin: "*"` they do not depend on the request's `Origin`). The read-cache lane writes them
 * without running the middlewares (docs/design/edge.md#read-cache-shortcut).
 */
export function hardeningHeadersOfGet(): string[] {
  const get = { method: "GET", headers: {} } as Partial<Request>;
  return [...helmetHeaders(), ...recordHeaders(corsPolicy, get)].flat();
}

/**
 * HTTP hardening for every response (server root and /v1): helmet's defaults (nosniff, frame
 * denial, HSTS, CSP, no X-Powered-By — the app disables it —, …) and the CORS policy above.
 */
export const hardening: RequestHandler[] = [securityHeaders(), corsPolicy];
