#!/usr/bin/env bash
# two_hosts.sh N program [args...]: N ranks on this machine, each told it is
# on its own host (NCCL_HOSTID=hostR), so NCCL and mkccl connect them through
# their net transports even when they share one GPU. Output is line-buffered,
# so a rank killed at a time limit still leaves its whole log.
set -euo pipefail
n=$1; shift
exec "$(dirname "$0")/../../.carry/bin/mkccl-run" -n "$n" -- \
  bash -c 'NCCL_HOSTID=host$MKCCL_RUN_RANK exec stdbuf -oL -eL "$@"' two_hosts "$@"
