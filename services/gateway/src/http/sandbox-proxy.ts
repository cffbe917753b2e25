import type { IncomingMessage, ServerResponse } from "node:http";
import type { Request, RequestHandler, Response } from "express";
import { createProxyMiddleware } from "http-proxy-middleware";
import { ApsError, TEST_KEY_PREFIX, type Logger } from "@aps/platform";
import { ROUTE_LABEL } from "./metrics.js";
import { sendProblem } from "./problem.js";

/** Paths only a sandbox serves (docs/design/agents.md#sandbox): its join and its test clock and seats. */
const SANDBOX_PATHS = /^\/v1\/(?:sandbox|test)(?:\/|$)/;

/** `Authorization: Bearer sk_test_…`: a sandbox's key (TEST_KEY_PREFIX). */
const TEST_BEARER = new RegExp(`^Bearer\\s+${TEST_KEY_PREFIX}`, "i");

/** Whether `req` bears a sandbox's `sk_test_` key (docs/design/agents.md#sandbox). */
function bearsTestKey(req: Request): boolean {
  const h = req.headers.authorization;
  return h !== undefined && TEST_BEARER.test(h);
}

/** Whether `req` is for the sandbox (docs/design/agents.md#sandbox): it bears an `sk_test_` key, or its path is the sandbox's own. */
export function isSandboxRequest(req: Request): boolean {
  return SANDBOX_PATHS.test(req.path) || bearsTestKey(req);
}

/**
 * The live gateway's way to its sandbox (docs/design/agents.md#sandbox): a request bearing an `sk_test_` key, or for
 * `/v1/sandbox/…` or `/v1/test/…`, is streamed unchanged (body, answer and event streams alike)
 * to the sandbox instance at `sandboxUrl`, with `X-Forwarded-For` set to the client address this
 * gateway judged (the sandbox trusts its live gateway as a proxy, so its per-source limits count the
 * same clients); everything else goes on. Its metrics and access log name the route `sandbox`.
 * The sandbox unreachable: 503 `upstream_unavailable`.
 */
export function sandboxProxy(sandboxUrl: string, log: Logger): RequestHandler {
  const proxy = createProxyMiddleware<Request, Response>({
    target: sandboxUrl,
    changeOrigin: false,
    // express strips nothing here (the middleware is mounted on the app): the path goes as it came
    pathFilter: (_path, req) => isSandboxRequest(req),
    proxyTimeout: 0, // event streams stay open; the sandbox's own deadlines bound everything else
    on: {
      proxyReq: (proxyReq, req) => {
        proxyReq.setHeader("x-forwarded-for", req.ip ?? req.socket.remoteAddress ?? "");
        proxyReq.setHeader("x-forwarded-proto", req.protocol);
      },
      error: (err, _req, res) => {
        log.warn({ err: String(err) }, "the sandbox did not answer");
        const r = res as ServerResponse<IncomingMessage>;
        if (!("status" in r) || r.headersSent) {
          r.destroy();
          return;
        }
        sendProblem(r as Response, new ApsError("upstream_unavailable", "the sandbox is not answering; try again"));
      },
    },
  });
  return (req, res, next) => {
    if (!isSandboxRequest(req)) return next();
    res.locals[ROUTE_LABEL] = "sandbox";
    void proxy(req, res, next);
  };
}

/**
 * A live gateway without a sandbox (docs/design/agents.md#sandbox): a request bearing an `sk_test_` key gets 401
 * `unauthenticated` saying why, after the standard headers and the rate limiter (so the answer has
 * them all). The sandbox's own paths are left to their routes, which answer 404 outside a sandbox.
 */
export const refuseTestKeys: RequestHandler = (req, res, next) => {
  if (!bearsTestKey(req)) return next();
  sendProblem(
    res,
    new ApsError(
      "unauthenticated",
      `a sandbox key (${TEST_KEY_PREFIX}…) is for the sandbox, which this deployment does not run: use a live key`,
    ),
  );
};
