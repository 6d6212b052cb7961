#!/usr/bin/env bash
# Variants side by side with net-socket's per-message timeline and the host
# executor's per-primitive times: a 4-rank 1 MB AllReduce over sockets, two
# rounds, from a carry built with tools/bench/socket_timeline.patch:
#   here:  git apply tools/bench/socket_timeline.patch && tools/dev/build.sh &&
#          PACK_HOST_BENCH=1 PACK_NVJITLINK=0 tools/gpu/pack.sh && git apply -R tools/bench/socket_timeline.patch
#   there: bash tools/bench/socket_timeline_ab.sh def= s64=MKCCL_HOST_NET_SLICE_STEPS=1 two=NCCL_SOCKET_NTHREADS=2
# A variant is "name=ENV[,ENV...]". The patch's MKCCL_HOST_NET_SLICE_STEPS=N sets
# ring slices of N steps (2 otherwise). TL_SIZE (1M) and TL_ITERS (1500) set the
# AllReduce. Benchmarks print; they assert nothing.
set -uo pipefail
cd "$(dirname "$0")/../.."
C=$PWD/.carry
export LD_LIBRARY_PATH=$C/lib:$C/deps
SIZE=${TL_SIZE:-1M}
for round in 1 2; do
  for v in "$@"; do
    name=${v%%=*}
    IFS=, read -ra extra <<<"${v#*=}"
    d=/tmp/socket-timeline-$name-$round
    rm -rf "$d" && mkdir -p "$d"
    xs=()
    for e in "${extra[@]}"; do [[ -n $e ]] && xs+=(-x "$e"); done
    out=$("$C/bin/mkccl-run" -n 4 -x NCCL_SHM_DISABLE=1 -x MKCCL_PRIMS_STATS=1 -x MKCCL_SOCK_TL="$d" "${xs[@]}" -- \
      "$C/bin/mkccl-perf" all_reduce -b "$SIZE" -e "$SIZE" -n "${TL_ITERS:-1500}" -w 20 -c 0 2>&1)
    echo "== $name round $round: busbw out of place, in place: $(echo "$out" | awk '/^ +[0-9]+ +[0-9]+ / { print $8, $12 }')"
    # the executor: per primitive (sched_ring.h numbers), averaged over the ranks
    echo "$out" | awk '/^# prims/ { p = $6; sub(":", "", p); n[p] += $7; kb[p] = $10; wr[p] += $20; ws[p] += $16; mv[p] += $23; c[p]++ }
      END { for (p in n) printf "   prim %s: %d slices of %s KB; waits: data %.1f us, send slot %.1f us; move %.1f us\n",
              p, n[p] / c[p], kb[p], wr[p] / c[p], ws[p] / c[p], mv[p] / c[p] }' | sort
    python3 tools/bench/socket_timeline.py "$d" 500
  done
done
