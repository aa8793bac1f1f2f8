#!/usr/bin/env bash
# Installs the official `openai` npm client (pinned in package.json) for the server's compatibility
# test, into a folder outside the tracked files. Usage: tools/openai/setup.sh [DIR]
# (default: build/npm-openai). Prints DIR on success.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here/../../build/npm-openai}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
cp "$here/package.json" "$dir/package.json"
want=$(node -p "require('$here/package.json').dependencies.openai")
have=$(node -p "require('$dir/node_modules/openai/package.json').version" 2>/dev/null || true)
if [ "$have" != "$want" ]; then
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error >&2)
fi
echo "$dir"
