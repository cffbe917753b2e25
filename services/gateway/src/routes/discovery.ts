import { Router, type Request, type Response } from "express";
import { notModified, strongEtag } from "@aps/api/http/conditional";
import {
  AGENT_CARD_PATH,
  agentCard,
  MCP_SERVER_MANIFEST_PATH,
  mcpServerManifest,
  publicOrigin,
  type DiscoveryOptions,
} from "../discovery.js";

/** How long a client or proxy may reuse a card built from PUBLIC_BASE_URL, seconds. */
const MAX_AGE_S = 60;

/** Options of {@link discoveryRoutes}. */
export interface DiscoveryRouteOptions extends DiscoveryOptions {
  /** PUBLIC_BASE_URL: its origin is the cards' base; unset (or unparsable), the request's origin. */
  publicBaseUrl?: string | undefined;
}

/**
 * Sends `body` as JSON with a strong ETag over its bytes (304 to a matching `If-None-Match`).
 * With a fixed public origin the answer is the same for everyone: `Cache-Control: public,
 * max-age=60` (the Atom feeds' rule); built from the request's own origin it keeps the app-wide `no-store`.
 */
function sendCard(req: Request, res: Response, body: unknown, shared: boolean): void {
  const text = JSON.stringify(body, null, 2);
  const etag = strongEtag(text);
  res.setHeader("ETag", etag);
  if (shared) res.setHeader("Cache-Control", `public, max-age=${MAX_AGE_S}`);
  if (notModified(req, etag)) {
    res.status(304).end();
    return;
  }
  res.type("application/json; charset=utf-8").send(text);
}

/**
 * `GET /.well-known/agent-card.json` (the A2A 0.3.0 agent card) and
 * `GET /.well-known/mcp/server.json` (the MCP registry manifest), no key, outside `/v1`
 * (docs/design/agents.md#agent-card-and-mcp-manifest). Their URLs are absolute:
 * PUBLIC_BASE_URL's origin, else the request's (`protocol://host`, so behind a proxy set
 * PUBLIC_BASE_URL or trust the proxy).
 */
export function discoveryRoutes(opts: DiscoveryRouteOptions): Router {
  const r = Router();
  const fixed = opts.publicBaseUrl ? publicOrigin(opts.publicBaseUrl, "") : "";
  const originOf = (req: Request): string => fixed || `${req.protocol}://${req.get("host") ?? "localhost"}`;
  r.get(AGENT_CARD_PATH, (req, res) => {
    sendCard(req, res, agentCard(originOf(req), opts), fixed !== "");
  });
  r.get(MCP_SERVER_MANIFEST_PATH, (req, res) => {
    sendCard(req, res, mcpServerManifest(originOf(req), opts), fixed !== "");
  });
  return r;
}
