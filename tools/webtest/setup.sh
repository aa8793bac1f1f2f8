#!/usr/bin/env bash
# Installs playwright-core (pinned in package.json) for the web UI's browser test, into a folder
# outside the tracked files. It drives Debian's /usr/bin/chromium; playwright-core itself never
# downloads a browser. Usage: tools/webtest/setup.sh [DIR] (default: build/npm-webtest). Prints DIR.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here/../../build/npm-webtest}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
cp "$here/package.json" "$dir/package.json"
if [ ! -f "$dir/node_modules/playwright-core/package.json" ]; then
  (cd "$dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --loglevel=error >&2)
fi
echo "$dir"
