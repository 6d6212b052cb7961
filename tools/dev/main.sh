#!/usr/bin/env bash
# The main job: install what is missing, build, show what mkccl loaded, and
# run host-memory collectives across 4 local ranks over the socket net plugin
# (shared memory off, so the data crosses TCP through the proxy).
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/dev/deps.sh
tools/dev/build.sh
./build/bin/mkccl-info --plugins
./build/bin/mkccl-run -n 4 -x NCCL_SHM_DISABLE=1 -- ./build/bin/mkccl-perf all_reduce -b 8 -e 64M -f 4 -n 10 -w 2
