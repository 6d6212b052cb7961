#!/usr/bin/env bash
# Repeated short host AllReduce runs with each iteration timed alone
# (MKCCL_PERF_SPREAD), from .carry/: tells a run slowed by a few stalls
# from one that is slow throughout.
# On the build machine:
#   tools/dev/build.sh && PACK_HOST_BENCH=1 PACK_NVJITLINK=0 tools/gpu/pack.sh
# then on the measuring machine, from the repository root with .carry/ beside the tree:
#   SPREAD_VARIANTS='def= c2=MKCCL_CHANNEL_MIN_BYTES=524288' bash bench/host_spread.sh
# SPREAD_VARIANTS: "name=ENV[,ENV...] ..."; SPREAD_PATH: shm or net;
# SPREAD_RANKS (4), SPREAD_SIZES (-b/-e: "1M 4M"), SPREAD_ITERS (40), SPREAD_REPEAT (6).
# Prints; asserts nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
C=$PWD/.carry
export LD_LIBRARY_PATH=$C/lib:$C/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
VARIANTS=${SPREAD_VARIANTS:-def=}
RANKS=${SPREAD_RANKS:-4}
read -r MIN MAX <<<"${SPREAD_SIZES:-1M 4M}"
ITERS=${SPREAD_ITERS:-40}
REPEAT=${SPREAD_REPEAT:-6}
base=()
[[ ${SPREAD_PATH:-shm} == net ]] && base=(NCCL_SHM_DISABLE=1)
echo "# host_spread: $(nproc) cores; path ${SPREAD_PATH:-shm}; $RANKS ranks; all_reduce float sum $MIN..$MAX, $ITERS iterations, out-of-place"
for ((i = 1; i <= REPEAT; i++)); do
  for v in $VARIANTS; do
    name=${v%%=*}
    IFS=, read -r -a envs <<<"${v#*=}"
    out=$(env "${base[@]}" "${envs[@]}" MKCCL_PERF_SPREAD=1 "$C/bin/mkccl-run" -n "$RANKS" -- \
      "$C/bin/mkccl-perf" all_reduce -b "$MIN" -e "$MAX" -f 4 -n "$ITERS" -w 3 -c 0 2>&1)
    # busbw (out of place) per size, then the spread lines of out-of-place runs
    bw=$(awk '/^ *[0-9]+ +[0-9]+ +[a-z]/ { printf " %s:%s", $1, $8 }' <<<"$out")
    echo "run $i $name busbw$bw"
    grep "spread .* out-of-place" <<<"$out" | sed 's/^# spread /      /'
  done
done
