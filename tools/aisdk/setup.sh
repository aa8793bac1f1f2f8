#!/usr/bin/env bash
# Installs the Vercel AI SDK (`ai`, `@ai-sdk/openai-compatible`, `@ai-sdk/openai` and `zod`, pinned in package.json) for
# the agent-framework client test (tests/clients/aisdk_agent.mjs), into a folder outside the tracked
# files. Usage: tools/aisdk/setup.sh [DIR] (default: build/npm-aisdk). Prints DIR on success.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here/../../build/npm-aisdk}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# Installed again whenever a pinned version changes (the installed package.json is the record).
if ! cmp -s "$here/package.json" "$dir/package.json" || [ ! -f "$dir/node_modules/ai/package.json" ]; then
  cp "$here/package.json" "$dir/package.json"
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error >&2)
fi
echo "$dir"
