#!/usr/bin/env bash
# The GPU check, in one device call (see tools/gpu/README.md):
#   run: tools/gpu/check.sh [tests|bench|all]   (with .carry/ from pack.sh)
# Correctness: every collective x type x op x size (0, odd, large), in and out
# of place, N processes (P2P, then SHM only, then NET only) and one process
# over all GPUs; then mkccl-perf-gpu against the machine's NCCL, same run.
set -uo pipefail
cd "$(dirname "$0")/../.."
what=${1:-all}
out=${OUT:-/tmp/out}
mkdir -p "$out"
C=$PWD/.carry
NCCL_DIR=$(python3 -c "import nvidia.nccl,os;print(os.path.dirname(nvidia.nccl.__path__[0]+'/x'))" 2>/dev/null)
export NCCL_NVLS_ENABLE=0
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}  # hangs and failures say why in the logs
export LD_LIBRARY_PATH=$C/lib:$C/deps:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
NGPU=$(nvidia-smi -L | wc -l)
# One GPU: two ranks share it (mkccl allows it on request; NCCL cannot).
if (( NGPU < 2 )); then export MKCCL_ALLOW_SAME_GPU=1; fi
echo "== $(nvidia-smi -L | head -8 | tr '\n' ';') NCCL at $NCCL_DIR"
fail=0
t() { # name, command...
  local name=$1; shift
  local t0=$(date +%s)
  if timeout ${TEST_TIMEOUT:-300} "$@" > "$out/$name.log" 2>&1; then echo "PASS $name ($(( $(date +%s) - t0 ))s)";
  else echo "FAIL $name rc=$? ($(( $(date +%s) - t0 ))s)"; tail -15 "$out/$name.log"; fail=1; fi
}
if [[ $what == tests || $what == all ]]; then
  $C/bin/mkccl-info --plugins > "$out/info.log" 2>&1
  NT=$(( NGPU < 2 ? 2 : NGPU ))
  if (( NGPU >= 2 )); then
    t gpu_p2p_proc $C/bin/test_gpu_coll proc $NGPU quick
    NCCL_P2P_DISABLE=1 t gpu_shm_proc $C/bin/test_gpu_coll proc $NGPU quick
    NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 t gpu_net_proc $C/bin/test_gpu_coll proc $NGPU quick
  fi
  # One process over all GPUs (on one GPU: two ranks sharing it, which only
  # works within a process: kernels of two processes time-slice).
  t gpu_p2p_thread $C/bin/test_gpu_coll thread $NT quick
  NCCL_P2P_DISABLE=1 t gpu_shm_thread $C/bin/test_gpu_coll thread $NT quick
  NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 t gpu_net_thread $C/bin/test_gpu_coll thread $NT quick
fi
if [[ ( $what == bench || $what == all ) && $NGPU -ge 2 ]]; then
  NP=$NGPU
  for coll in ${BENCH_COLLS:-all_reduce all_gather reduce_scatter broadcast sendrecv}; do
    for lib in mkccl nccl; do
      if [[ $lib == nccl ]] && (( NGPU < 2 )); then continue; fi
      if [[ $lib == nccl ]]; then LIBP=$NCCL_DIR/lib; else LIBP=$C/lib; fi
      LD_LIBRARY_PATH=$LIBP:$C/deps:/usr/local/cuda/lib64 timeout ${BENCH_TIMEOUT:-300} $C/bin/mkccl-run -n $NP -- \
        $C/bin/mkccl-perf-gpu $coll -b ${BENCH_MIN:-8} -e ${BENCH_MAX:-8G} -f ${BENCH_F:-8} -n ${BENCH_ITERS:-20} -w 5 -c ${BENCH_CHECK:-1} \
        > "$out/bench_${coll}_${lib}.log" 2>&1 || echo "bench $coll $lib rc=$?"
    done
  done
  grep -h "^#\|^ " "$out"/bench_*.log | head -400
fi
exit $fail
