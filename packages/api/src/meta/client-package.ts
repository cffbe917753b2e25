import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Router } from "express";
import { notModified, strongEtag } from "../http/conditional.js";

/** Where the service serves the client's tarball: `/client/<filename>` (docs/reference/client.md). */
export const CLIENT_PATH = "/client";

/**
 * The packed `@aps/client` the service serves (docs/reference/client.md "Install"): the tarball
 * `npm pack` made at build time (packages/client/scripts/pack.mjs), with what npm records of it.
 */
export interface ClientPackage {
  /** `aps-client-<version>.tgz`. */
  filename: string;
  /** The package's version (its package.json). */
  version: string;
  /** Subresource Integrity of the tarball as npm records it in a lockfile: `sha512-<base64>`. */
  integrity: string;
  /** SHA-1 of the tarball, hex (npm's `shasum`). */
  shasum: string;
  /** The tarball's bytes. */
  bytes: Buffer;
  /** The path it is served at: `/client/<filename>`. */
  href: string;
}

/**
 * Reads the tarball and its `pack.json` from `<clientDir>/dist/pack/` (the built `@aps/client`);
 * undefined when the package was built without it (then `GET /v1` names no client link and
 * `/client/…` answers 404). Throws when `pack.json` is there but names a missing or different file.
 */
export function loadClientPackage(clientDir: string): ClientPackage | undefined {
  const dir = join(clientDir, "dist", "pack");
  if (!existsSync(join(dir, "pack.json"))) return undefined;
  const meta = JSON.parse(readFileSync(join(dir, "pack.json"), "utf8")) as Omit<ClientPackage, "bytes" | "href">;
  if (!/^aps-client-[0-9A-Za-z.+-]+\.tgz$/.test(meta.filename))
    throw new Error(`${dir}/pack.json names an unexpected tarball ${JSON.stringify(meta.filename)}`);
  const bytes = readFileSync(join(dir, meta.filename));
  return {
    filename: meta.filename,
    version: meta.version,
    integrity: meta.integrity,
    shasum: meta.shasum,
    bytes,
    href: `${CLIENT_PATH}/${meta.filename}`,
  };
}

/**
 * `GET /client/<filename>`: the tarball (`application/gzip`), with a strong ETag (as every
 * served document's, so `If-None-Match` answers 304), `Repr-Digest: sha-512=:…:` (RFC 9530; the same digest as the
 * `integrity` npm checks) and an hour of caching. Another file name falls through (404).
 */
export function clientPackageRoutes(pkg: ClientPackage | undefined): Router {
  const r = Router();
  if (!pkg) return r;
  const digest = `sha-512=:${pkg.integrity.replace(/^sha512-/, "")}:`;
  const etag = strongEtag(pkg.bytes);
  r.get(pkg.href, (req, res) => {
    res.setHeader("Cache-Control", "public, max-age=3600");
    res.setHeader("ETag", etag);
    res.setHeader("Repr-Digest", digest);
    res.setHeader("Content-Disposition", `attachment; filename="${pkg.filename}"`);
    if (notModified(req, etag)) return void res.status(304).end();
    res.type("application/gzip").send(pkg.bytes);
  });
  return r;
}
