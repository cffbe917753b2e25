#!/usr/bin/env node
// Build step of @aps/web: copies the standalone browser bundle of Scalar's API reference
// (`@scalar/api-reference`, a devDependency) to dist/scalar-standalone.js, so the page
// `/docs/api` is served from the build and the package with its ~250 MB of dependencies stays out
// of the production install and the image (docs/design/edge.md#api-reference-page).
import { copyFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = fileURLToPath(new URL("..", import.meta.url));
// The package's "default" export is dist/index.js; the browser bundle sits beside it.
const main = createRequire(join(pkg, "package.json")).resolve("@scalar/api-reference");
const from = join(dirname(main), "browser", "standalone.js");
const to = join(pkg, "dist", "scalar-standalone.js");
mkdirSync(dirname(to), { recursive: true });
copyFileSync(from, to);
