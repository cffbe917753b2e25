#!/usr/bin/env bash
# `buf breaking` (WIRE rules, proto/buf.yaml) of proto/ against an earlier version of it: by default
# the schema as it was just before the newest commit that changed proto/aps, i.e. "the current
# schema is wire-compatible with the previous schema version"; APS_PROTO_BASE=<git rev> picks
# another base (e.g. main, on a branch). A commit whose message contains "[proto-break]" is an
# acknowledged break: while it is the newest proto change, the check compares with it (and passes).
# docs/design/services.md#proto-lint-and-breaking-checks
set -euo pipefail
cd "$(dirname "$0")/.."
buf=proto/node_modules/.bin/buf
[ -x "$buf" ] || buf=node_modules/.bin/buf
base="${APS_PROTO_BASE:-}"
if [ -z "$base" ]; then
  last=$(git log -n 1 --format=%H -- proto/aps)
  if [ -z "$last" ] || ! git rev-parse -q --verify "$last^" >/dev/null; then
    echo "proto-breaking: SKIPPED — no earlier version of proto/aps in this clone's history" >&2
    exit 0
  fi
  # uncommitted proto changes compare with HEAD, committed ones with the version before them
  if ! git diff --quiet HEAD -- proto/aps; then
    base=HEAD
  elif git log -n 1 --format=%B "$last" | grep -qF "[proto-break]"; then
    echo "proto-breaking: $(git log -n 1 --format="%h %s" "$last") is an acknowledged break ([proto-break]); checking against it"
    base="$last"
  else
    base="$last^"
  fi
fi
if [ -z "$(git ls-tree -r --name-only "$base" -- proto/aps)" ]; then
  echo "proto-breaking: SKIPPED — $base has no proto/aps" >&2
  exit 0
fi
echo "proto-breaking: proto/ against $(git rev-parse --short "$base")"
"$buf" breaking proto --against ".git#ref=$(git rev-parse "$base"),subdir=proto"
