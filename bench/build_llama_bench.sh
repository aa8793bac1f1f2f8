#!/usr/bin/env bash
# Builds llama.cpp's llama-bench (and llama-quantize) from the source node-llama-cpp ships (a git
# bundle), in a scratch folder outside the repository. Prints the path of the llama-bench binary;
# llama-quantize is beside it.
# Usage: bench/build_llama_bench.sh [SCRATCH_DIR]   (default /tmp/kvscope-llama-bench)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
scratch=${1:-/tmp/kvscope-llama-bench}
oracle=${KVSCOPE_ORACLE_DIR:-$(bash "$here/../tools/oracle/setup.sh" | tail -n 1)}
bin="$scratch/build/bin/llama-bench"
if [ ! -x "$bin" ] || [ ! -x "$scratch/build/bin/llama-quantize" ]; then
  mkdir -p "$scratch"
  [ -d "$scratch/src" ] || git clone -q "$oracle/node_modules/node-llama-cpp/llama/gitRelease.bundle" "$scratch/src" 2>/dev/null
  cmake -S "$scratch/src" -B "$scratch/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DLLAMA_CURL=OFF \
    -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF -DBUILD_SHARED_LIBS=OFF >&2
  cmake --build "$scratch/build" -j "$(nproc)" --target llama-bench llama-quantize >&2
fi
echo "$bin"
