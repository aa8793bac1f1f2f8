#!/usr/bin/env bash
# Installs kvscope's build and test dependencies from Debian 12 packages (run as root).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
pkgs=(build-essential cmake git pkg-config
      libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev libcpp-httplib-dev libhiredis-dev
      clang libclang-rt-14-dev python3 python3-torch redis-server)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# The llama.cpp oracle (node-llama-cpp 3.21.1) needs Node.js >= 20; Debian 12's own nodejs is 18.
if ! command -v node >/dev/null || [ "$(node -e 'console.log(process.versions.node.split(".")[0])')" -lt 20 ]; then
  echo "warning: Node.js >= 20 not found; the parity tests against llama.cpp need it (e.g. NodeSource's nodejs 20)" >&2
  apt-get install -y -qq nodejs npm || true
fi
