#!/usr/bin/env bash
# Configures and builds mkccl into ./build (warnings are errors).
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S . -B build -DMKCCL_WERROR=ON "$@"
cmake --build build -j"$(nproc)"
