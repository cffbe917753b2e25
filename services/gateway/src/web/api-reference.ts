import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Router } from "express";
import { escapeHtml } from "./html.js";

/**
 * `GET /docs/api`: the OpenAPI document (`/v1/openapi.json`) rendered for people by Scalar's
 * API reference (`@scalar/api-reference`, MIT), whose standalone browser bundle this gateway
 * serves itself from node_modules — no CDN (docs/adr/0137).
 */

/** Public path of the page. */
export const API_REFERENCE_PATH = "/docs/api";

/** The standalone bundle of `@scalar/api-reference` (one file, ~4 MB), as installed. */
export function scalarBundlePath(): string {
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
 * agent, no "open client" button — nothing on this page talks to any host but this one.
 */
const SCALAR_CONFIG = {
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  hideClientButton: true,
  metaData: { title: "APS API reference" },
};

/**
 * The page's Content-Security-Policy: the site's policy (web/routes.ts PAGE_CSP) except that the
 * bundle injects its style sheet as a `<style>` element carrying the nonce it reads from
 * `<meta property="csp-nonce">`, so `style-src` admits that per-response nonce; scripts stay
 * 'self' only (no inline script, no eval).
 */
export function apiReferenceCsp(nonce: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join("; ");
}

/** The HTML of the page: the document's URL and Scalar's settings as data attributes, then the bundle. */
export function apiReferenceHtml(bundlePath: string, nonce: string, specUrl = "/v1/openapi.json"): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta property="csp-nonce" content="${escapeHtml(nonce)}">
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

/** `GET /docs/api` (a new nonce per response, `no-store`) and the hashed bundle (immutable). */
export function apiReferenceRoutes(bundle: ScalarBundle = loadScalarBundle()): Router {
  const r = Router();
  r.get(API_REFERENCE_PATH, (_req, res) => {
    const nonce = randomBytes(16).toString("base64");
    res.setHeader("Content-Security-Policy", apiReferenceCsp(nonce));
    res.type("text/html; charset=utf-8").send(apiReferenceHtml(bundle.path, nonce));
  });
  r.get(bundle.path, (_req, res) => {
    res.setHeader("Cache-Control", "public, max-age=31536000, immutable");
    res.type("text/javascript; charset=utf-8").send(bundle.body);
  });
  return r;
}
