#!/usr/bin/env bash
# Runs the built SDK under Bun and Deno (installed from npm into a temp dir; not part of `npm test`,
# the binaries are ~100 MB each). Usage: bash packages/sdk/scripts/check-runtimes.sh
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$here" && npm pack --silent --pack-destination "$work" >/dev/null)
cd "$work"
echo '{"type":"module"}' > package.json
npm install --silent --no-audit --no-fund ./voxkey-sdk-*.tgz standardwebhooks bun deno >/dev/null
cp "$here/scripts/runtime-smoke.mjs" .
node_modules/.bin/bun run runtime-smoke.mjs
node_modules/.bin/deno run --allow-read --allow-net --allow-env runtime-smoke.mjs
node runtime-smoke.mjs
