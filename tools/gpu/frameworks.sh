#!/usr/bin/env bash
# The framework check: PyTorch and CuPy on mkccl, on a GPU machine that has
# them, in under 9 minutes (ONE_GPU_BUDGET_S, below). On the build machine:
#   tools/dev/build.sh && tools/gpu/pack.sh
# then on the GPU machine, from the repository root with .carry/ beside the tree:
#   bash tools/gpu/frameworks.sh
# docs/FRAMEWORKS.md says what each check does.
#
# Every mkccl case runs its program through .carry/bin/mkccl-exec (the one
# step a user takes), ranks sharing a GPU with MKCCL_ALLOW_SAME_GPU=1 where
# there are fewer GPUs than ranks. Sections (FRAMEWORKS_ONLY, default TNC):
#   T  torch (backend nccl) on mkccl: tools/gpu/frameworks/torch_check.py
#      under torchrun with 2 and 4 ranks (FRAMEWORKS_RANKS), every check in
#      one launch; each rank proves mkccl served it
#   N  the same program on NVIDIA's NCCL (no mkccl-exec; ranks given their
#      own NCCL_HOSTID, FRAMEWORKS_NVIDIA_RANKS, default 2): its proof must
#      say NVIDIA's copy served, which shows the proof tells them apart
#   C  CuPy's cupy.cuda.nccl on mkccl: tools/gpu/frameworks/cupy_check.py, 2 ranks
# A case fails on a non-zero exit, on any FAIL line, or when a rank's proof
# or final RESULT line is missing; NOTRUN lines (what the installed torch or
# CuPy lacks) are counted in the summary, never passed. FW_CHECKS picks
# torch_check.py's groups; ONE_GPU_CASES is a regex on case names;
# ONE_GPU_BUDGET_S bounds all cases (default 520 s). Logs, with each rank's
# NCCL log (NCCL_DEBUG=INFO) under $OUT/CASE/, are packed into $OUT/logs.tgz.
# FRAMEWORKS_WHEEL=1: mkccl as a PyTorch user installs it instead, the
# carried wheel (PACK_WHEEL=1 tools/gpu/pack.sh) installed with pip from the
# file alone, and the mkccl-exec that the wheel installs.
set -uo pipefail
cd "$(dirname "$0")/../.."
export ONE_GPU_BUDGET_S=${ONE_GPU_BUDGET_S:-520}
source tools/gpu/gpu_lib.sh
ONLY=${FRAMEWORKS_ONLY:-TNC}
RANKS=${FRAMEWORKS_RANKS:-2 4}
NV_RANKS=${FRAMEWORKS_NVIDIA_RANKS:-2}
FW=tools/gpu/frameworks
EXEC=$C/bin/mkccl-exec
# The carried library's one dependency this machine may lack (libyaml).
DEPS=LD_LIBRARY_PATH=$C/deps
export PYTHONDONTWRITEBYTECODE=1
if [[ ${FRAMEWORKS_WHEEL:-0} == 1 ]]; then
  WHEEL=$(ls "$C"/mkccl-*.whl 2>/dev/null | head -1)
  if [[ -z $WHEEL ]] || ! python3 -m pip install -q --no-index --no-deps --target "$OUT/py" "$WHEEL" > "$OUT/pip.txt" 2>&1; then
    echo "FAIL frameworks: pip install of the carried wheel (${WHEEL:-none}): $(tail -1 "$OUT/pip.txt" 2>/dev/null)" | tee -a "$OUT/summary.txt"
    exit 1
  fi
  export PYTHONPATH=$OUT/py${PYTHONPATH:+:$PYTHONPATH}
  EXEC=$OUT/py/bin/mkccl-exec
  DEPS=MKCCL_FROM_WHEEL=1 # the wheel bundles what its library needs
fi
if ! MKLIB=$("$EXEC" --lib); then
  echo "FAIL frameworks: no mkccl-exec in the carry ($EXEC); run tools/gpu/pack.sh" | tee -a "$OUT/summary.txt"
  exit 1
fi
have() { timeout 90 python3 -c "$1" > "$OUT/have_$2.txt" 2>&1; }
if have "import torch; print('torch', torch.__version__, 'NCCL', torch.cuda.nccl.version(), 'GPUs', torch.cuda.device_count())" torch; then
  HAVE_TORCH=1; echo "== $(tail -1 "$OUT/have_torch.txt"); mkccl's library: $MKLIB"
else
  HAVE_TORCH=0; gpu_case torch notrun "NOTRUN torch: $(tail -1 "$OUT/have_torch.txt")"
fi
if have "import cupy; from cupy.cuda import nccl; print('cupy', cupy.__version__, 'nccl', getattr(nccl, 'available', '?'))" cupy; then
  HAVE_CUPY=1; echo "== $(tail -1 "$OUT/have_cupy.txt")"
else
  HAVE_CUPY=0; gpu_case cupy notrun "NOTRUN cupy: $(tail -1 "$OUT/have_cupy.txt")"
fi

# A rank left running past its case (its launcher killed at the limit) is
# ended by its own pid, which it left in DIR/pids.
fw_reap() {
  local f pid
  for f in "$1"/*; do
    [[ -e $f ]] || continue
    pid=${f##*/}
    if [[ -r /proc/$pid/environ ]] && tr '\0' '\n' < "/proc/$pid/environ" | grep -qx "FW_PID_DIR=$1"; then
      kill -9 "$pid" 2>/dev/null && echo "  ended leftover rank process $pid"
    fi
  done
}
LINE='^(\[[^]]*\]:)?'  # a launcher may put [rank]: before a line
# The counts of a case's lines; its FAIL lines fail it; NOTRUN reasons listed once.
fw_tally() {
  local name=$1 log=$OUT/$1.log p f n
  [[ -f $log ]] || return 0
  p=$(grep -cE "${LINE}PASS " "$log"); f=$(grep -cE "${LINE}FAIL " "$log"); n=$(grep -cE "${LINE}NOTRUN " "$log")
  echo "  $name: $p PASS, $f FAIL, $n NOTRUN lines" | tee -a "$OUT/summary.txt"
  if ((f)); then
    gpu_case "$name" fail "FAIL $name: $f FAIL lines"
    grep -E "${LINE}FAIL " "$log" | head -25 | cut -c1-400 | sed 's/^/  | /'
  fi
  grep -E "${LINE}NOTRUN " "$log" | sed -E "s/${LINE}//; s/ \[rank [0-9]+\/[0-9]+\]//" | sort | uniq -c |
    awk '{c = $1; $1 = ""; sub(/^ /, ""); print "  " $0 " (" c " rank" (c > 1 ? "s" : "") ")"}' | tee -a "$OUT/summary.txt"
  grep -E "${LINE}INFO " "$log" | sed -E "s/${LINE}//; s/ \[rank [0-9]+\/[0-9]+\]//" | sort -u | head -40 |
    cut -c1-300 | sed 's/^/  /'
}
# A case whose log lacks COUNT lines matching PATTERN (a rank's proof, its
# end) fails: a rank that stopped early must not pass.
fw_need() {
  local name=$1 pat=$2 count=$3 got
  [[ -f $OUT/$name.log ]] || return 0
  got=$(grep -cE "${LINE}$pat" "$OUT/$name.log")
  if ((got < count)); then
    gpu_case "$name" fail "FAIL $name: $got of $count ranks printed '$pat'"
  fi
}
# fw_case NAME LIMIT ENV... -- CMD...: one launch through gpu_lib's t, each
# rank's NCCL log in $OUT/NAME/, leftovers ended, lines counted.
fw_case() {
  local name=$1 lim=$2 dir=$OUT/$1
  shift 2
  mkdir -p "$dir/pids"
  t "$name" "$lim" NCCL_DEBUG=INFO "NCCL_DEBUG_FILE=$dir/nccl_%h_%p.log" "FW_PID_DIR=$dir/pids" \
    "FW_DEADLINE_S=$((lim - 15))" "FW_MKCCL_LIB=$MKLIB" "$@"
  fw_reap "$dir/pids"
  fw_tally "$name"
}
TORCHRUN=(python3 -m torch.distributed.run --standalone)

if [[ $ONLY == *T* ]] && ((HAVE_TORCH)); then
  echo "== T: torch (backend nccl) on mkccl through mkccl-exec, ranks: $RANKS"
  for n in $RANKS; do
    name=torch_${n}rank
    fw_case "$name" $((n <= 2 ? 150 : 180)) $DEPS MKCCL_ALLOW_SAME_GPU=1 "FW_CHECKS=${FW_CHECKS:-all}" -- \
      "$EXEC" "${TORCHRUN[@]}" --nproc-per-node "$n" $FW/torch_check.py
    [[ ${FW_CHECKS:-all} == *all* || ${FW_CHECKS:-} == *proof* ]] && fw_need "$name" "PASS proof \[" "$n"
    fw_need "$name" "RESULT rank " "$n"
  done
fi

if [[ $ONLY == *N* ]] && ((HAVE_TORCH)); then
  echo "== N: the same program on NVIDIA's NCCL (no mkccl-exec), $NV_RANKS rank(s): NVIDIA must be found serving"
  name=torch_nvidia_${NV_RANKS}rank
  # symm_mem too where picked: across its "hosts" NVIDIA's copy needs GIN, and the check says NOTRUN.
  NV_CHECKS=smoke,proof
  [[ ${FW_CHECKS:-all} == *all* || ${FW_CHECKS:-} == *symm_mem* ]] && NV_CHECKS=smoke,symm_mem,proof
  fw_case "$name" 90 FW_EXPECT=nvidia FW_CHECKS=$NV_CHECKS FW_HOSTID_PER_RANK=1 -- \
    "${TORCHRUN[@]}" --nproc-per-node "$NV_RANKS" $FW/torch_check.py
  fw_need "$name" "PASS proof.nvidia .*served by NVIDIA" "$NV_RANKS"
fi

if [[ $ONLY == *C* ]] && ((HAVE_CUPY)); then
  echo "== C: CuPy's cupy.cuda.nccl on mkccl through mkccl-exec, 2 ranks"
  fw_case cupy_2rank 90 $DEPS MKCCL_ALLOW_SAME_GPU=1 -- "$EXEC" python3 $FW/cupy_check.py --nranks 2
  if [[ -f $OUT/cupy_2rank.log ]] && ! grep -qE "${LINE}NOTRUN cupy " "$OUT/cupy_2rank.log"; then
    fw_need cupy_2rank "PASS cupy.proof \[" 2
    fw_need cupy_2rank "RESULT rank " 2
  fi
fi

gpu_done
exit $?
