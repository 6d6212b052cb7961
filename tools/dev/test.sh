#!/usr/bin/env bash
# Every test: install what is missing, build, run the whole ctest suite.
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/dev/deps.sh
tools/dev/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600
