#!/usr/bin/env bash
# The GPU check for a machine with SEVERAL GPUs (2, 4, 8 H200s or H100s),
# over all of its N GPUs, one rank per GPU, in under 9 minutes
# (ONE_GPU_BUDGET_S, default 520 s for all cases). On the build machine:
#   tools/dev/build.sh && PACK_NVJITLINK=0 tools/gpu/pack.sh
# then on the GPU machine, from the repository root with .carry/ beside the tree:
#   bash tools/gpu/multi_gpu.sh
# Sections, run in this order: Q F M L T C (MULTI_GPU_ONLY picks, default all;
# ONE_GPU_CASES is a regex on case names); correctness first, so a short
# budget (ONE_GPU_BUDGET_S) cuts benchmarks, not checks; a case cut is "not
# run" and fails the run (pick the sections that fit instead):
#   Q  quick correctness: test_gpu_coll (every collective, a few types and
#      sizes; small AllReduces run FLAT, which one case checks in its log)
#      with N processes and with N GPUs in one process, over P2P (the
#      default mode, write except on Ampere, and read mode), SHM only and NET only; the
#      logs must show the transport asked for; a captured graph; the
#      communicator and memory API (test_gpu_api); a peer
#      killed mid-AllReduce and init/abort cycles (no leaks) over P2P; the
#      matrix again with NCCL_PROTO=LL and NCCL_PROTO=Simple (the model mixes
#      them by size otherwise); trees forced (NCCL_ALGO) over P2P, SHM and NET
#   M  what one CTA does: bench/gpu_micro.cu (copy and reduce
#      rates, the cost of a fence and of a hop; MICRO_TESTS picks), and
#      AllReduce/Broadcast on one channel, mkccl vs NCCL (Simple, one channel)
#   L  small-AllReduce latency (8 B to 1 MB, 200 iterations): host time per
#      call and per iteration, NCCL and mkccl (default, 1 channel, P2P read
#      mode, SHM)
#   T  NVIDIA's nccl-tests built here against NCCL's nccl.h, each program run
#      with -g N (one process, N GPUs) on NCCL's libnccl.so.2 and on mkccl's,
#      data checked (-c 1), side by side (NT_ARGS overrides the arguments)
#   C  benchmark: mkccl-perf-gpu, N processes, all_reduce, all_gather,
#      reduce_scatter, broadcast, sendrecv, 8 B to 8 GB (BENCH_MAX), linked
#      against mkccl's libnccl.so.2 and NCCL's in the same run, side by side
#      (data unchecked unless BENCH_CHECK=1: section T checks it, and the
#      host check of 8 GB takes a minute); then variants of mkccl's AllReduce
#   F  the full matrix (every type and op, counts 0, 1, 7 and 1000003), N
#      processes and N GPUs in one process, over P2P; and in processes on trees
# Logs: $OUT/logs.tgz; stdout carries the summary and the tables.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tools/gpu/gpu_lib.sh
ONLY=${MULTI_GPU_ONLY:-QFMLTC}
N=${MULTI_GPU_N:-$NGPU}
if ((N < 2)); then echo "multi_gpu.sh: $NGPU GPU(s) here; use tools/gpu/one_gpu.sh"; exit 2; fi
echo "== $N ranks, one per GPU; topology:"
nvidia-smi topo -m 2>&1 | head -$((N + 2))

G="LD_LIBRARY_PATH=$MK_LD MKCCL_GPU_WATCHDOG=3 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT"
P2P_OFF="NCCL_P2P_DISABLE=1"
NET_ONLY="NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1"
TREE="NCCL_DEBUG_SUBSYS=INIT,TUNING NCCL_ALGO=allreduce:tree;broadcast:tree;reduce:tree"
# The case used the transport it was asked for (selection can fall back).
via() { need "$1" "via $2"; }

if [[ $ONLY == *Q* ]]; then
echo "== Q: quick correctness, $N GPUs"
t proc_p2p 60 $G -- $C/bin/test_gpu_coll proc $N quick
via proc_p2p p2p
# The small AllReduces of the matrix (1 and 7 elements) run FLAT by default.
t proc_p2p_flat 60 $G NCCL_DEBUG_SUBSYS=INIT,TUNING -- $C/bin/test_gpu_coll proc $N quick
need proc_p2p_flat "Algo flat"
t proc_p2p_read 60 $G NCCL_P2P_READ_ENABLE=1 -- $C/bin/test_gpu_coll proc $N quick
via proc_p2p_read p2p
t thread_p2p 60 $G -- $C/bin/test_gpu_coll thread $N quick
via thread_p2p p2p
t proc_shm 60 $G $P2P_OFF -- $C/bin/test_gpu_coll proc $N quick
via proc_shm shm
t thread_shm 60 $G $P2P_OFF -- $C/bin/test_gpu_coll thread $N quick
via thread_shm shm
t proc_net 60 $G $NET_ONLY -- $C/bin/test_gpu_coll proc $N quick
via proc_net net
t thread_net 60 $G $NET_ONLY -- $C/bin/test_gpu_coll thread $N quick
via thread_net net
t proc_p2p_ll 90 $G NCCL_DEBUG_SUBSYS=INIT,TUNING NCCL_PROTO=LL -- $C/bin/test_gpu_coll proc $N quick
need proc_p2p_ll "proto ll"
t thread_p2p_ll 90 $G NCCL_DEBUG_SUBSYS=INIT,TUNING NCCL_PROTO=LL -- $C/bin/test_gpu_coll thread $N quick
need thread_p2p_ll "proto ll"
t proc_p2p_simple 60 $G NCCL_PROTO=Simple -- $C/bin/test_gpu_coll proc $N quick
# Trees (AllReduce, and Broadcast/Reduce rooted at each root) over P2P, SHM
# and NET: the model picks rings on NVLink, so they are forced.
for m in "proc_p2p_tree:proc:" "thread_p2p_tree:thread:" "proc_shm_tree:proc:$P2P_OFF" "proc_net_tree:proc:$NET_ONLY"; do
  IFS=: read -r name mode env <<< "$m"
  t "$name" 90 $G $TREE $env -- $C/bin/test_gpu_coll "$mode" $N quick
  need "$name" "Algo tree"
done
t graph_p2p 60 $G -- $C/bin/test_gpu_coll graph $N
# The communicator and memory API (tests/gpu/test_gpu_api.c), one rank per GPU.
for m in split shrink revoke window simulate nonblocking; do
  ((N >= 3)) || [[ $m != shrink ]] || continue # survivors of a shrink: more than one
  t api_$m 60 $G -- $C/bin/test_gpu_api $m $N
done
t kill_p2p 30 $G MKCCL_TIMEOUT=2 -- $C/bin/test_gpu_fault kill $N
t leak_p2p 60 $G MKCCL_TIMEOUT=600 -- $C/bin/test_gpu_fault leak $N
fi

if [[ $ONLY == *F* ]]; then
echo "== F: the full matrix, $N GPUs, P2P"
t full_proc_p2p 200 $G -- $C/bin/test_gpu_coll proc $N
t full_thread_p2p 200 $G -- $C/bin/test_gpu_coll thread $N
t full_proc_p2p_tree 200 $G $TREE -- $C/bin/test_gpu_coll proc $N
need full_proc_p2p_tree "Algo tree"
fi

if [[ $ONLY == *M* ]]; then
echo "== M: one CTA: microbenchmark, then one channel, mkccl vs NCCL (Simple)"
t micro 60 -- $C/bin/mkccl-gpu-micro ${MICRO_TESTS:-copy reduce slice pingpong}
grep -v "^$" "$OUT/micro.log" | sed 's/^/  /'
for coll in all_reduce broadcast; do
  t "one_ch_${coll}_nccl" 60 LD_LIBRARY_PATH=$NC_LD NCCL_MIN_NCHANNELS=1 NCCL_MAX_NCHANNELS=1 NCCL_PROTO=Simple -- \
    $C/bin/mkccl-run -n $N -- $C/bin/mkccl-perf-gpu $coll -b 16M -e 256M -f 4 -n 10 -w 3 -c 0
  t "one_ch_${coll}_mkccl" 60 LD_LIBRARY_PATH=$MK_LD MKCCL_GPU_NCHANNELS=1 -- \
    $C/bin/mkccl-run -n $N -- $C/bin/mkccl-perf-gpu $coll -b 16M -e 256M -f 4 -n 10 -w 3 -c 0
  for lib in nccl mkccl; do echo "  $coll one channel, $lib:"; grep "^ " "$OUT/one_ch_${coll}_$lib.log" | sed 's/^/  /'; done
done
fi

if [[ $ONLY == *L* ]]; then
echo "== L: small AllReduce latency, $N processes: host time per call and total per iteration (rank 0)"
lat() { # name, ld, env...: 8 B to 1 MB, 200 iterations
  local name=$1 ld=$2; shift 2
  t "lat_$name" 60 LD_LIBRARY_PATH=$ld MKCCL_PERF_HOST_US=1 "$@" -- \
    $C/bin/mkccl-run -n $N -- $C/bin/mkccl-perf-gpu all_reduce -b 8 -e 1M -f 8 -n 200 -w 20 -c 0
  echo "  $name:"; grep "^ \|us/iter" "$OUT/lat_$name.log" | grep -v in-place | sed 's/^/    /'
}
lat nccl $NC_LD
lat mkccl $MK_LD
lat mkccl_simple $MK_LD NCCL_PROTO=Simple
lat mkccl_read $MK_LD NCCL_P2P_READ_ENABLE=1
lat mkccl_shm $MK_LD NCCL_P2P_DISABLE=1
fi

if [[ $ONLY == *T* ]]; then
echo "== T: NVIDIA's nccl-tests, -g $N in one process, NCCL 2.28.9 vs mkccl, data checked"
nccl_tests_section "${NT_ARGS:--b 8 -e 8G -f 8 -g $N -c 1 -w 5 -n 20}" 120 "-g $N, one process"
fi

if [[ $ONLY == *C* ]]; then
echo "== C: mkccl-perf-gpu, $N processes, mkccl vs NCCL 2.28.9 (same binary, the library picked by LD_LIBRARY_PATH)"
COLLS=(${BENCH_COLLS:-all_reduce all_gather reduce_scatter broadcast sendrecv})
for coll in "${COLLS[@]}"; do
  for lib in nccl mkccl; do
    if [[ $lib == nccl ]]; then ld=$NC_LD; else ld=$MK_LD; fi
    t "perf_${coll}_$lib" 120 LD_LIBRARY_PATH=$ld NCCL_DEBUG=WARN LD_DEBUG=libs LD_DEBUG_OUTPUT=$OUT/perf_${coll}_$lib.ld -- \
      $C/bin/mkccl-run -n $N -- $C/bin/mkccl-perf-gpu $coll -b ${BENCH_MIN:-8} -e ${BENCH_MAX:-8G} -f ${BENCH_F:-8} \
      -n ${BENCH_ITERS:-20} -w 5 -c ${BENCH_CHECK:-0}
  done
done
# Variants of mkccl's AllReduce (BENCH_VARIANTS: name=ENV[,ENV...] ...), side by side.
for v in ${BENCH_VARIANTS:-read=NCCL_P2P_READ_ENABLE=1 ch16=MKCCL_GPU_NCHANNELS=16}; do
  name=${v%%=*} envs=${v#*=}
  t "perf_all_reduce_mkccl_$name" 120 LD_LIBRARY_PATH=$MK_LD ${envs//,/ } -- \
    $C/bin/mkccl-run -n $N -- $C/bin/mkccl-perf-gpu all_reduce -b 8 -e ${BENCH_MAX:-8G} -f 8 -n ${BENCH_ITERS:-20} -w 5 \
    -c ${BENCH_CHECK:-0}
  echo "  mkccl all_reduce, ${envs//,/ }:"; grep "^ " "$OUT/perf_all_reduce_mkccl_$name.log" | sed 's/^/  /'
done
python3 tools/gpu/nccl_tests_table.py --prefix perf --label "mkccl-perf-gpu, $N processes" "$OUT" \
  "$C/lib/libnccl.so.2" "$NCCL_DIR/lib/libnccl.so.2" "${COLLS[@]}" > "$OUT/perf_table.txt" 2>&1 || fail=1
cat "$OUT/perf_table.txt"
grep -E "^(PASS|FAIL) perf_" "$OUT/perf_table.txt" >> "$OUT/summary.txt"
fi

gpu_done
exit $?
