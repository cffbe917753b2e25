#!/bin/sh
# Collects the runtime file set of the APS image into $1 (deploy/docker/Dockerfile, build stage).
# Run from the repository root after `turbo run build` and `npm prune --omit=dev`:
#   root package.json + node_modules (production only);
#   per workspace package with a dist/: package.json, dist/ (migrations are copied into dist by
#   each build) and nested node_modules if npm put any there;
#   the gateway's skill.md, the web pages' assets (packages/web/web-assets/) and the reference docs the
#   gateway serves (docs/reference).
# Dev-only workspaces (testkit, test) are left out; workspace links to them are removed.
set -eu
out="${1:?usage: assemble.sh <out-dir>}"
mkdir -p "$out"
cp package.json "$out/"
# the embedded PostgreSQL's library symlinks, made now: the image's root file system is read-only
node --input-type=module -e 'await (await import("./services/all-in-one/dist/embedded-postgres.js")).binaries()'
cp -a node_modules "$out/node_modules"
for d in proto packages/* services/*; do
  [ -d "$d/dist" ] || continue
  case "$d" in packages/testkit) continue ;; esac
  mkdir -p "$out/$d"
  cp "$d/package.json" "$out/$d/"
  cp -a "$d/dist" "$out/$d/dist"
  if [ -d "$d/node_modules" ]; then cp -a "$d/node_modules" "$out/$d/node_modules"; fi
done
cp services/gateway/skill.md "$out/services/gateway/skill.md"
cp -a packages/web/web-assets "$out/packages/web/web-assets"
if [ -d docs/reference ]; then
  mkdir -p "$out/docs"
  cp -a docs/reference "$out/docs/reference"
fi
# workspace links whose target is not shipped would dangle
find "$out/node_modules" -maxdepth 2 -xtype l -delete
# every deployable of the one service list (packages/platform/src/topology.ts) must have its entry point
entries=$(node --input-type=module -e 'const t = await import("./packages/platform/dist/topology.js"); console.log([...t.SERVICES, t.GATEWAY].map((s) => t.entryPoint(s.name)).join(" "))')
[ -n "$entries" ] || { echo "assemble.sh: no service list" >&2; exit 1; }
for e in $entries; do
  test -f "$out/$e" || { echo "assemble.sh: $e missing" >&2; exit 1; }
done
