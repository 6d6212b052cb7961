#!/usr/bin/env bash
# Staging bytes one communicator holds over the net, shared buffers (OFFSET
# mode, NCCL_NET_SHARED_BUFFERS=1) against per-connection buffers (0), for
# N host ranks (forked processes on this machine, forced onto net-socket)
# and 1 or 2 channels: each rank makes every p2p connection (one all-to-all
# group of 4-byte messages) and logs what transport-net holds; the table
# gives rank 0's most (every rank holds the same).
#   bench/net_shared_buffers.sh [BUILD_DIR] [RANKS...]
# NCCL_BUFFSIZE is 256 KB (32 KB steps) unless set: the bytes scale with it,
# and with NCCL's default (4 MB) 64 ranks without shared buffers would pin
# 64 GB on one machine.
set -euo pipefail
build=${1:-build-noc}
shift || true
ranks=${*:-2 4 8 16 32 64}
bench=$build/bin/mkccl-net-buffers-bench
[ -x "$bench" ] || { echo "no $bench: build it first (cmake --build $build --target mkccl-net-buffers-bench)" >&2; exit 1; }
export NCCL_BUFFSIZE=${NCCL_BUFFSIZE:-262144}
port=$((20000 + RANDOM % 20000))

held() { # ranks channels shared -> "bytes pools conns"
  port=$((port + 1))
  local out
  out=$(NCCL_SHM_DISABLE=1 NCCL_P2P_DISABLE=1 NCCL_NET_SHARED_BUFFERS=$3 MKCCL_HOST_NCHANNELS=$2 \
        MKCCL_P2P_NCHANNELS=$2 NCCL_COMM_ID=127.0.0.1:$port NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT \
        "$bench" "$1" 2>&1) || { echo "$out" | grep -E "WARN|failed" >&2; echo "run failed: $1 ranks, $2 channels, shared $3" >&2; exit 1; }
  echo "$out" | sed -n 's/.*rank 0: transport-net holds \([0-9]*\) bytes of staging (\([0-9]*\) pools, \([0-9]*\) connections).*/\1 \2 \3/p' |
    sort -n | tail -1
}

mib() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1048576 }'; }

echo "NCCL_BUFFSIZE=$NCCL_BUFFSIZE"
echo
echo "| ranks | channels | shared: MiB (pools, connections) | unshared: MiB (connections) | unshared / shared |"
echo "|---:|---:|---:|---:|---:|"
for c in 1 2; do
  for n in $ranks; do
    read -r sb sp sc < <(held "$n" "$c" 1)
    read -r ub up uc < <(held "$n" "$c" 0)
    ratio=$(awk -v u="$ub" -v s="$sb" 'BEGIN { printf "%.2f", u / s }')
    echo "| $n | $c | $(mib "$sb") ($sp, $sc) | $(mib "$ub") ($uc) | $ratio |"
  done
done
