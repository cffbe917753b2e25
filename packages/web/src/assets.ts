import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RequestHandler } from "express";

/**
 * Static files of the web pages (`packages/web/web-assets/`: one style sheet, one script),
 * served at `/assets/<name>.<sha256 first 12 hex>.<ext>` with `Cache-Control: public,
 * max-age=31536000, immutable` (docs/design/edge.md#web-pages): a changed file gets a new name, so a year-long cache
 * is never stale. They are read once at start, like skill.md.
 */

/** `packages/web/web-assets/` (this file is `packages/web/{src,dist}/assets.{ts,js}`). */
export const ASSETS_DIR = fileURLToPath(new URL("../web-assets/", import.meta.url));

const TYPES: Record<string, string> = {
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".svg": "image/svg+xml",
};

/** One asset ready to serve. */
export interface Asset {
  /** Public path, e.g. `/assets/app.3f2a9c1b7d4e.css`. */
  path: string;
  type: string;
  body: Buffer;
}

/** The assets by source file name (`app.css` → its hashed public path and bytes). */
export type Assets = Map<string, Asset>;

/** Reads every file of `dir` with a known type and names it by its content hash. */
export function loadAssets(dir = ASSETS_DIR): Assets {
  const out: Assets = new Map();
  for (const file of readdirSync(dir).sort()) {
    const ext = extname(file);
    const type = TYPES[ext];
    if (!type) continue;
    const body = readFileSync(join(dir, file));
    const hash = createHash("sha256").update(body).digest("hex").slice(0, 12);
    out.set(file, { path: `/assets/${file.slice(0, -ext.length)}.${hash}${ext}`, type, body });
  }
  return out;
}

/** Public path of a source asset; throws at start-up when the file is missing. */
export function assetPath(assets: Assets, file: string): string {
  const a = assets.get(file);
  if (!a) throw new Error(`web asset ${file} is missing from ${ASSETS_DIR}`);
  return a.path;
}

/** Serves the hashed asset paths (GET/HEAD); anything else under /assets falls through. */
export function serveAssets(assets: Assets): RequestHandler {
  const byPath = new Map([...assets.values()].map((a) => [a.path, a]));
  return (req, res, next) => {
    const a = req.method === "GET" || req.method === "HEAD" ? byPath.get(req.path) : undefined;
    if (!a) {
      next();
      return;
    }
    res.setHeader("Cache-Control", "public, max-age=31536000, immutable");
    res.type(a.type).send(a.body);
  };
}
