import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Router } from "express";
import { escapeHtml } from "./html.js";

/**
 * `GET /docs/api`: the OpenAPI document (`/v1/openapi.json`) rendered for people by Scalar's
 * API reference (`@scalar/api-reference`, MIT), whose standalone browser bundle this gateway
 * serves itself from node_modules — no CDN (docs/design/edge.md#api-reference-page).
 */

/** Public path of the page. */
export const API_REFERENCE_PATH = "/docs/api";

/**
 * The standalone bundle of `@scalar/api-reference` (one file, ~4 MB): the copy the build put beside
 * this module (packages/web/dist/scalar-standalone.js, scripts/vendor-scalar.mjs) — the only one in the
 * image, where the package itself is not installed (docs/design/edge.md#api-reference-page) — else, when running from
 * the sources, the installed package's.
 */
export function scalarBundlePath(): string {
  const built = fileURLToPath(new URL("./scalar-standalone.js", import.meta.url));
  if (existsSync(built)) return built;
  // The package's "default" export is dist/index.js; the browser bundle sits beside it.
  const main = createRequire(import.meta.url).resolve("@scalar/api-reference");
  return join(dirname(main), "browser", "standalone.js");
}

/** The bundle ready to serve: its bytes and hashed public path. */
export interface ScalarBundle {
  /** e.g. `/docs/api/scalar.3f2a9c1b7d4e.js`: a new version gets a new name (cached a year). */
  path: string;
  body: Buffer;
}

/** Reads the bundle once (at start, like skill.md); throws when the package is missing. */
export function loadScalarBundle(file = scalarBundlePath()): ScalarBundle {
  const body = readFileSync(file);
  const hash = createHash("sha256").update(body).digest("hex").slice(0, 12);
  return { path: `${API_REFERENCE_PATH}/scalar.${hash}.js`, body };
}

/**
 * Scalar's settings: system fonts (its default loads them from its CDN), no telemetry, no AI
 * agent, no "open client" button, no developer toolbar (share/deploy to Scalar's hosts) and no
 * "generate MCP" link (this gateway has its own MCP server at /mcp) — nothing on this page talks
 * to any host but this one.
 */
const SCALAR_CONFIG = {
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: "never",
  hideClientButton: true,
  metaData: { title: "APS API reference" },
};

/**
 * The page's Content-Security-Policy: the site's policy (routes.ts PAGE_CSP) except that
 * `style-src` admits inline styles — the bundle injects its style sheet and Vue's component styles
 * as `<style>` elements and style attributes, most without the nonce it could carry (tried:
 * blocked in Chromium). Scripts stay 'self' only (no inline script, no eval); fetches, images and
 * fonts go to this host only. Inline styles cannot run code, and the page shows no participant's text.
 */
export const API_REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join("; ");

/** The HTML of the page: the document's URL and Scalar's settings as data attributes, then the bundle. */
export function apiReferenceHtml(bundlePath: string, specUrl = "/v1/openapi.json"): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>APS API reference</title>
</head>
<body>
<noscript><p>This page needs JavaScript. The same reference is at <a href="${escapeHtml(specUrl)}">${escapeHtml(specUrl)}</a> (OpenAPI 3.1) and, in prose, at <a href="/docs/endpoints">/docs/endpoints</a>.</p></noscript>
<script id="api-reference" data-url="${escapeHtml(specUrl)}" data-configuration="${escapeHtml(JSON.stringify(SCALAR_CONFIG))}"></script>
<script src="${escapeHtml(bundlePath)}"></script>
</body>
</html>
`;
}

/** `GET /docs/api` (`no-store` like every page) and the hashed bundle (immutable). */
export function apiReferenceRoutes(bundle: ScalarBundle = loadScalarBundle()): Router {
  const r = Router();
  const page = apiReferenceHtml(bundle.path);
  r.get(API_REFERENCE_PATH, (_req, res) => {
    res.setHeader("Content-Security-Policy", API_REFERENCE_CSP);
    res.type("text/html; charset=utf-8").send(page);
  });
  r.get(bundle.path, (_req, res) => {
    res.setHeader("Cache-Control", "public, max-age=31536000, immutable");
    res.type("text/javascript; charset=utf-8").send(bundle.body);
  });
  return r;
}
