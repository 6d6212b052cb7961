#!/usr/bin/env bash
# GPU hang diagnosis on a machine with 2 GPUs, everything to stdout, in
# under 5 minutes (each case has a hard time limit). See docs/GPU_HANG.md.
# On the build machine:
#   tools/dev/build.sh && tools/gpu/pack.sh          (.carry/, ~13 MB)
# then on the GPU machine, from the repository root with .carry/ beside the tree:
#   bash tools/gpu/diag.sh
#
# Each case runs under a hard time limit; a hang is expected and is the
# finding: the kernels' watchdog (every 2 s) and an nvidia-smi snapshot taken
# while it hangs say where. Per case, read:
#   "GPU probe: ... empty kernel done ... visible"  kernels of this comm run and
#        their status rows reach the host (at init, before any collective);
#   "last launch: work ahead of it X, kernel Y"     X not-ready: the stream is
#        blocked before our kernel; X done + Y not-ready: the kernel was
#        released to the GPU and has not ended;
#   "channel 0 op .. ticks N"                        N >= 1000000: the CTA
#        started; N grows: thread 0 spins in a wait (word/target say which);
#   "ring send/recv: devStep .. tail@..=.. head@..=.." the device's step
#        counters and the head/tail words as the GPU sees them;
#   nvidia-smi: utilization > 0 while hung = a kernel occupies the GPU;
#        compute-apps = which processes hold a context on which GPU.
set -uo pipefail
cd "$(dirname "$0")/../.."
C=$PWD/.carry
T0=$SECONDS
export LD_LIBRARY_PATH=$C/lib:$C/deps:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN MKCCL_GPU_WATCHDOG=2 MKCCL_GPU_PROBE=1
HANG=${DIAG_HANG_S:-15}

echo "==== machine"
nvidia-smi -L
nvidia-smi --query-gpu=index,name,driver_version,compute_mode,mig.mode.current,persistence_mode --format=csv
nvidia-smi topo -m 2>&1 | head -6
echo "CUDA_MODULE_LOADING=${CUDA_MODULE_LOADING:-<unset>} CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-<unset>}"
NGPU=$(nvidia-smi -L | wc -l)

snapshot() { # while a case runs: who is on the GPUs, are they busy
  sleep "$1"
  echo "  -- nvidia-smi at +$1 s:"
  nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader | sed 's/^/  gpu /'
  nvidia-smi --query-compute-apps=gpu_bus_id,pid,used_memory --format=csv,noheader | sed 's/^/  app /'
}

# name, lines to show, env assignments..., -- command...
case_run() {
  local name=$1 lines=$2; shift 2
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  if (( SECONDS - T0 > 260 )); then echo "==== $name: skipped (time)"; return; fi
  echo "==== $name: ${envs[*]} $*"
  local log=/tmp/diag_$name.log t=$SECONDS
  snapshot 8 &
  local snap=$!
  env "${envs[@]}" timeout -s KILL "$HANG" "$@" > "$log" 2>&1
  local rc=$?
  wait $snap 2>/dev/null
  echo "  rc=$rc after $((SECONDS - t)) s ($( ((rc == 137)) && echo HUNG/killed || echo ended))"
  grep -v "^case\|^launched" "$log" | head -"$lines" | sed 's/^/  | /'
  # timeout -s KILL ends the case's process group; rank processes also die
  # with their parent (PR_SET_PDEATHSIG, tests/common/ranks.c).
  sleep 1
}

if (( NGPU >= 2 )); then
  case_run p2p_proc 70 X=1 -- "$C/bin/test_gpu_coll" proc 2 quick
  case_run p2p_proc_eager 40 CUDA_MODULE_LOADING=EAGER MKCCL_GPU_PROBE=0 -- "$C/bin/test_gpu_coll" proc 2 quick
  case_run p2p_proc_1ch 40 MKCCL_GPU_NCHANNELS=1 MKCCL_GPU_PROBE=0 -- "$C/bin/test_gpu_coll" proc 2 quick
  case_run shm_proc 40 NCCL_P2P_DISABLE=1 MKCCL_GPU_PROBE=0 -- "$C/bin/test_gpu_coll" proc 2 quick
  case_run net_proc 40 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 MKCCL_GPU_PROBE=0 -- "$C/bin/test_gpu_coll" proc 2 quick
  case_run p2p_thread 50 TEST_GPU_VERBOSE=1 -- "$C/bin/test_gpu_coll" thread 2 quick
fi
# Two ranks in one process on one GPU: the same-context hazards (lazy
# loading, stack growth at launch, legacy-stream copies).
case_run same_gpu_thread 40 CUDA_VISIBLE_DEVICES=0 MKCCL_ALLOW_SAME_GPU=1 TEST_GPU_VERBOSE=1 -- \
  "$C/bin/test_gpu_coll" thread 2 quick

# The machine itself: NCCL's own AllReduce between the same GPUs.
N=$(python3 -c "import nvidia.nccl,os;print(nvidia.nccl.__path__[0])" 2>/dev/null)
if [[ -n $N && $NGPU -ge 2 && $((SECONDS - T0)) -lt 270 ]]; then
  echo "==== nccl reference"
  LD_LIBRARY_PATH=$N/lib:$C/deps:/usr/local/cuda/lib64 MKCCL_GPU_WATCHDOG=0 timeout -s KILL 25 \
    "$C/bin/mkccl-run" -n 2 -- "$C/bin/mkccl-perf-gpu" all_reduce -b 8 -e 1M -f 32 -n 5 -w 2 -c 1 2>&1 | tail -8
fi
echo "==== diag done in $((SECONDS - T0)) s"
