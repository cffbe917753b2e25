import cors from "cors";
import helmet from "helmet";
import type { RequestHandler } from "express";

/**
 * CORS policy (docs/adr/0040-cors-any-origin-bearer-keys.md): any origin may call the API, for
 * the public reads and for writes alike, because authority comes only from the
 * `Authorization: Bearer` key the caller sends itself — no cookies, no ambient credentials, so
 * `Access-Control-Allow-Credentials` is never sent. Preflights answer 204. `If-None-Match` and
 * `ETag` are allowed/exposed so a page can revalidate reads (docs/adr/0088).
 */
export const CORS_ALLOWED_HEADERS = ["Authorization", "Content-Type", "Idempotency-Key", "X-Request-Id", "If-None-Match"];
export const CORS_EXPOSED_HEADERS = ["X-Request-Id", "X-Skill-Version", "Retry-After", "Location", "Idempotent-Replayed", "RateLimit-Policy", "RateLimit", "ETag"];

/**
 * HTTP hardening for every response (server root and /v1): helmet's defaults (nosniff, frame
 * denial, HSTS, CSP, no X-Powered-By, …) and the CORS policy above.
 */
export const hardening: RequestHandler[] = [
  helmet(),
  cors({
    origin: "*",
    methods: ["GET", "HEAD", "POST", "DELETE"],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    credentials: false,
    maxAge: 600,
    optionsSuccessStatus: 204,
  }),
];
