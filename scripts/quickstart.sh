#!/usr/bin/env bash
# First run on a fresh Debian 12 box (as root): installs only what building and running needs,
# builds only the `kvscope` binary (no tests, no benchmarks) and runs the main job on the embedded
# model. The test dependencies and the full build are scripts/test.sh's.
# Usage: bash scripts/quickstart.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
if [ "$(id -u)" = 0 ]; then
  bash scripts/install-deps.sh --runtime
else
  echo "note: not root, so no packages are installed (bash scripts/install-deps.sh --runtime as root does it)" >&2
fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DKVSCOPE_TESTS=OFF -DKVSCOPE_BENCH=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target kvscope_cli
echo "== main job: a question from the held-out natural set (data/natural/) on the embedded model (reasoning effort high: thinking, then the answer)" >&2
"./$build/kvscope" run -n 120 --temp 0 --reasoning-effort high -p "Ana has 12 pencils. Ben has 3 times as many. How many pencils does Ben have?"
echo "next: ./$build/kvscope serve, then open http://127.0.0.1:8080/ (chat) and /dashboard" >&2
