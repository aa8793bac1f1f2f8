#!/usr/bin/env bash
# Installs the correctness oracle (llama.cpp via the npm package node-llama-cpp, pinned) into a
# folder outside the source tree's tracked files, and unpacks llama.cpp's source from the git bundle
# the package ships (tokenizer test vectors live in its models/ folder; llama-bench is built from it).
# Usage: tools/oracle/setup.sh [DIR]   (default: build/oracle). Prints DIR on success.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here/../../build/oracle}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
cp "$here/package.json" "$dir/package.json"
if [ ! -d "$dir/node_modules/node-llama-cpp" ]; then
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error >&2)
fi
if [ ! -d "$dir/llama.cpp/models" ]; then
  rm -rf "$dir/llama.cpp"
  git clone -q "$dir/node_modules/node-llama-cpp/llama/gitRelease.bundle" "$dir/llama.cpp" 2>/dev/null
fi
echo "$dir"
