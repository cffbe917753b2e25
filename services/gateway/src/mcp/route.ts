import express, { type Request, type RequestHandler, type Router } from "express";
import { jsonBodies } from "@aps/api/http/body";
import { createApsMcpServer } from "@aps/mcp";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ApsError, type Logger } from "@aps/platform";
import { mcpBearer } from "../oauth/server.js";
import type { OAuthStore } from "../oauth/store.js";

/**
 * The base URL of the API this very listener serves, over the connection the request came in on
 * (loopback or the pod's own address): the MCP tools call the public `/v1` API through it, so an
 * MCP client gets exactly what an HTTP agent gets (docs/design/agents.md#mcp-server).
 */
export function ownBaseUrl(req: Request): string {
  const addr = req.socket.localAddress ?? "127.0.0.1";
  const host = addr.startsWith("::ffff:") ? addr.slice(7) : addr.includes(":") ? `[${addr}]` : addr;
  return `http://${host}:${req.socket.localPort}/v1`;
}

/** The key of `Authorization: Bearer <key>`, or the header as sent (its calls then get the 401), or nothing. */
function credentials(req: Request): { apiKey?: string; headers: Record<string, string> } {
  const h = req.header("authorization");
  const m = h === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(h);
  const headers: Record<string, string> = {};
  if (m?.[1]) return { apiKey: m[1], headers };
  if (h !== undefined) headers.authorization = h;
  return { headers };
}

/**
 * The browser origins `/mcp` serves (docs/design/agents.md#untrusted-content): a list of origins
 * (`scheme://host[:port]`, as `new URL(x).origin` writes them), `"*"` in it for any origin, or
 * undefined for the service's own only — PUBLIC_BASE_URL's origin when the gateway has one (the
 * caller passes it in the list), else `http://localhost`, `http://127.0.0.1` or `http://[::1]` on
 * the port the request came in on (the default base URL, `npm start`).
 */
export type McpOrigins = readonly string[] | undefined;

/**
 * The origins `/mcp` serves from the gateway's config: MCP_ALLOWED_ORIGINS when set, else the
 * origin of PUBLIC_BASE_URL (the service's own public origin), else undefined (loopback on the
 * listening port, the default base URL). An unparsable PUBLIC_BASE_URL counts as unset.
 */
export function mcpOrigins(allowed: readonly string[] | undefined, publicBaseUrl: string | undefined): McpOrigins {
  if (allowed) return allowed;
  if (!publicBaseUrl) return undefined;
  try {
    return [new URL(publicBaseUrl).origin];
  } catch {
    return undefined;
  }
}

/** The origin of an `Origin` header as browsers write it, or undefined for `null` and anything unparsable. */
function originOf(header: string): string | undefined {
  try {
    const o = new URL(header).origin;
    return o === "null" ? undefined : o;
  } catch {
    return undefined;
  }
}

/**
 * Refuses a request whose `Origin` is not allowed with 403 problem+json `forbidden`: the MCP
 * specification's guard against DNS rebinding (a page of another site whose name now resolves to
 * this server; Streamable HTTP "Security Warning": servers MUST validate `Origin`). A request
 * without `Origin` is not a browser's cross-site request (MCP clients, curl, the SDKs send none)
 * and passes. Origins compare exactly after URL normalisation (case of scheme and host, default
 * port).
 */
export function mcpOriginCheck(allowed: McpOrigins): RequestHandler {
  const list = allowed === undefined ? undefined : new Set(allowed);
  return (req, _res, next) => {
    const header = req.header("origin");
    if (header === undefined) return next();
    const origin = originOf(header);
    const port = req.socket.localPort;
    const ok =
      origin !== undefined &&
      (list === undefined
        ? [`http://localhost:${port}`, `http://127.0.0.1:${port}`, `http://[::1]:${port}`].includes(origin)
        : list.has("*") || list.has(origin));
    if (ok) return next();
    next(
      new ApsError(
        "forbidden",
        `Origin ${JSON.stringify(header)} may not use /mcp: only this service's own origin or MCP_ALLOWED_ORIGINS (clients outside a browser send no Origin)`,
      ),
    );
  };
}

/** What `/mcp` needs of OAuth (docs/design/agents.md#oauth-for-mcp): the token store and PUBLIC_BASE_URL. */
export interface McpOAuth {
  /** The shared token store; undefined on a gateway without a database (no OAuth: `/mcp` still needs a bearer). */
  store: OAuthStore | undefined;
  publicBaseUrl: string | undefined;
}

/**
 * MCP over Streamable HTTP at `/mcp` (docs/design/agents.md#mcp-server), stateless: each POST gets a new server and
 * transport for the caller's `Authorization: Bearer <key or OAuth access token>`, answered as JSON.
 * `/mcp` needs a bearer: without one it answers 401 with `WWW-Authenticate: Bearer
 * resource_metadata="…"`, where an OAuth client starts discovery ({@link mcpBearer},
 * docs/design/agents.md#oauth-for-mcp); an access token that is unknown, expired or revoked is a
 * 401 too. `/mcp/public` is the same server for anonymous readers: no credentials needed (a
 * bearer sent there is used as on `/mcp`); tools that need a key answer the tool error `unauthenticated`. The tools call this gateway's
 * `/v1` API over the same listener, with the caller's key, address (`X-Forwarded-For`, honoured
 * when the gateway trusts its own address) and request id. `GET` (a server-initiated event
 * stream) and `DELETE` (ending a session) have nothing to do without sessions: 405, as the MCP
 * specification asks. The body obeys the API's 64 KiB JSON limit; the request counts against the
 * per-minute limit like any other, and so does each `/v1` call its tools make. A browser
 * `Origin` that is not in `origins` gets 403 before anything else ({@link mcpOriginCheck}).
 * `openapi` is this gateway's OpenAPI document (`GET /v1/openapi.json`): each tool's
 * `outputSchema` is its operation's success schema there (docs/design/agents.md#mcp-output-schemas).
 */
export function mcpRoutes(
  log: Logger,
  origins?: McpOrigins,
  openapi?: object,
  oauth: McpOAuth = { store: undefined, publicBaseUrl: undefined },
): Router {
  const router = express.Router();
  router.use("/mcp", mcpOriginCheck(origins));
  const handle: RequestHandler = async (req, res, next) => {
    const { apiKey, headers } = credentials(req);
    const requestId = res.getHeader("X-Request-Id");
    if (typeof requestId === "string") headers["x-request-id"] = requestId;
    if (req.ip) headers["x-forwarded-for"] = req.ip;
    const server = createApsMcpServer({ baseUrl: ownBaseUrl(req), apiKey, headers, openapi });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (err) {
      log.error({ err: String(err) }, "MCP request failed");
      if (!res.headersSent) next(err);
    }
  };
  const notAllowed: RequestHandler = (_req, res) => {
    res
      .status(405)
      .setHeader("Allow", "POST")
      .json({
        jsonrpc: "2.0",
        error: { code: -32000, message: "Method not allowed: this MCP endpoint is stateless, use POST" },
        id: null,
      });
  };
  router.post("/mcp", mcpBearer(oauth.store, oauth.publicBaseUrl), jsonBodies(), handle);
  router.post("/mcp/public", jsonBodies(), handle);
  for (const path of ["/mcp", "/mcp/public"]) {
    router.get(path, notAllowed);
    router.delete(path, notAllowed);
  }
  return router;
}
