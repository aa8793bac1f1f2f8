#!/usr/bin/env bash
# Installs kvscope's dependencies from Debian 12 packages (run as root).
#   install-deps.sh            everything: building and running, plus what the tests need
#   install-deps.sh --runtime  only what building and running the `kvscope` binary needs
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
mode=all
case "${1:-}" in
  "") ;;
  --runtime) mode=runtime ;;
  *) echo "error: unknown option '$1' (use --runtime, or nothing for the test dependencies too)" >&2; exit 1 ;;
esac
# Building and running: the compiler, CMake and the -dev libraries the binary links.
runtime=(build-essential cmake pkg-config nlohmann-json3-dev libcli11-dev libcpp-httplib-dev libhiredis-dev)
# Tests only: unit tests and benchmarks, the fuzzer (clang), the trainer smoke test (PyTorch), the
# decision cache's and the KV tier's Redis, the scale-out test's router (nginx, curl; python3-yaml checks
# the Kubernetes manifests), the web UI's browser test (Chromium; playwright-core comes from npm),
# and the llama.cpp oracle / openai client (Node.js, below).
tests=(git libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-14-dev python3 python3-torch redis-server chromium
       nginx curl python3-yaml)
pkgs=("${runtime[@]}")
[ "$mode" = all ] && pkgs+=("${tests[@]}")
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
[ "$mode" = runtime ] && exit 0
# The llama.cpp oracle (node-llama-cpp 3.21.1) needs Node.js >= 20; Debian 12's own nodejs is 18.
if ! command -v node >/dev/null || [ "$(node -e 'console.log(process.versions.node.split(".")[0])')" -lt 20 ]; then
  echo "warning: Node.js >= 20 not found; the parity tests against llama.cpp need it (e.g. NodeSource's nodejs 20)" >&2
  apt-get install -y -qq nodejs npm || true
fi
