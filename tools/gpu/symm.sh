#!/usr/bin/env bash
# The symmetric kernels' check on one GPU, in under the budget
# (ONE_GPU_BUDGET_S, default 520 s). On the build machine:
#   tools/dev/build.sh && PACK_NVJITLINK=0 tools/gpu/pack.sh
# then on the GPU machine, from the repository root with .carry/ beside the tree:
#   bash tools/gpu/symm.sh
# Ranks are processes sharing the GPU (MKCCL_ALLOW_SAME_GPU=1).
#   correctness: test_gpu_symm with 2 and 4 ranks (every element of every
#     rank, in and out of place, each collective, op and type; the count of
#     collectives that ran symmetric checked), and the same calls on the rings
#   benchmark: mkccl-perf-gpu --symm 1 (buffers in symmetric windows),
#     AllReduce, AllGather, ReduceScatter from 8 B to 1 MB, -c 1 (#wrong),
#     with the symmetric kernels and with MKCCL_SYMM_MAX_BYTES=0 (the same
#     buffers through the ring kernels); both tables and a side-by-side one
# SYMM_ONLY=C (correctness) or B (benchmark) runs one half. Logs go to
# $OUT/logs.tgz (default /tmp/out); stdout carries PASS/FAIL per case, the
# tables and the verdict.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tools/gpu/gpu_lib.sh
ONLY=${SYMM_ONLY:-CB}
G="LD_LIBRARY_PATH=$MK_LD MKCCL_ALLOW_SAME_GPU=1 MKCCL_TIMEOUT=60"

if [[ $ONLY == *C* ]]; then
  echo "== correctness: symmetric kernels, then the same calls on the rings"
  t symm_test_2 240 $G -- $C/bin/test_gpu_symm symm 2
  t symm_test_ring_2 180 $G -- $C/bin/test_gpu_symm ring 2 quick
  t symm_test_4 240 $G -- $C/bin/test_gpu_symm symm 4 quick
fi

if [[ $ONLY == *B* ]]; then
  echo "== benchmark: symmetric kernels against the rings, same buffers (out-of-place time, us)"
  ARGS=(-b 8 -e 1M -f 2 -n 20 -w 5 -c 1 --symm 1)
  for n in 2 4; do
    for coll in all_reduce all_gather reduce_scatter; do
      s=bench_${coll}_${n}_symm r=bench_${coll}_${n}_ring
      t "$s" 120 $G NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING MKCCL_SYMM_MAX_BYTES=1048576 -- $C/bin/mkccl-run -n "$n" -- $C/bin/mkccl-perf-gpu "$coll" "${ARGS[@]}"
      need "$s" "Algo symmetric"
      t "$r" 120 $G NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING MKCCL_SYMM_MAX_BYTES=0 -- \
        $C/bin/mkccl-run -n "$n" -- $C/bin/mkccl-perf-gpu "$coll" "${ARGS[@]}"
      if [[ ${GPU_CASE[$r]:-} == pass ]] && grep -q "Algo symmetric" "$OUT/$r.log"; then
        gpu_case "$r" fail "FAIL $r: ran symmetric kernels with MKCCL_SYMM_MAX_BYTES=0"
      fi
      for k in "$s" "$r"; do
        echo "-- $k"
        grep "^#\|^ " "$OUT/$k.log" 2>/dev/null | grep -v "^# *$" | head -30
      done
      # size, symmetric time, ring time, ring/symmetric (out of place; #wrong of both)
      echo "-- $coll, $n ranks: size(B) symm(us) ring(us) ring/symm #wrong(symm,ring)"
      join <(awk '/^ +[0-9]/ {print $1, $6, $9}' "$OUT/$s.log" 2>/dev/null | sort -k1,1) \
           <(awk '/^ +[0-9]/ {print $1, $6, $9}' "$OUT/$r.log" 2>/dev/null | sort -k1,1) |
        sort -n | awk '{printf "  %10s %9s %9s %7.2f  %s,%s\n", $1, $2, $4, ($2 > 0 ? $4 / $2 : 0), $3, $5}'
    done
  done
fi

gpu_done
exit $?
