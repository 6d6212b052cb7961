#!/usr/bin/env bash
# Planner variants side by side on N GPUs: mkccl-perf-gpu
# with each SWEEP entry (name=ENV[,ENV...]; "nccl" entries run NCCL's
# library), per collective in SWEEP_COLLS, sizes SWEEP_MIN..SWEEP_MAX.
# Prints one table per collective: time (us) per size and variant
# (out of place; SWEEP_COL=10: in place). SWEEP_ITERS (20) and SWEEP_CHECK
# (0; 1 checks every result) pass on to mkccl-perf-gpu.
# Each variant has 90 s, all of them ONE_GPU_BUDGET_S (default 520 s).
# On the build machine: tools/dev/build.sh && tools/gpu/pack.sh; then on
# the GPU machine, from the repository root with .carry/ beside the tree:
#   bash tools/gpu/sweep.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
source tools/gpu/gpu_lib.sh
N=${MULTI_GPU_N:-$NGPU}
SWEEP=${SWEEP:-"nccl=NCCL_DEBUG=WARN mkccl=NCCL_DEBUG=WARN"}
for coll in ${SWEEP_COLLS:-all_reduce}; do
  names=()
  for v in $SWEEP; do
    name=${v%%=*} envs=${v#*=}
    if [[ $name == nccl* ]]; then ld=$NC_LD; else ld=$MK_LD; fi
    t "sw_${coll}_$name" 90 LD_LIBRARY_PATH=$ld ${envs//,/ } -- \
      $C/bin/mkccl-run -n $N -- $C/bin/mkccl-perf-gpu $coll -b ${SWEEP_MIN:-1M} -e ${SWEEP_MAX:-128M} -f 2 \
      -n ${SWEEP_ITERS:-20} -w 5 -c ${SWEEP_CHECK:-0}
    names+=("$name")
  done
  echo "== $coll, $N processes: out-of-place time (us) per variant"
  for n in "${names[@]}"; do grep -E "^ +[0-9]" "$OUT/sw_${coll}_$n.log" | awk -v c=${SWEEP_COL:-6} '{print $1, $c}' > "$OUT/sw_${coll}_$n.col"; done
  printf "%10s" size; for n in "${names[@]}"; do printf " %14s" "$n"; done; echo
  python3 - "$OUT" "$coll" "${names[@]}" <<'PY'
import sys
out, coll, names = sys.argv[1], sys.argv[2], sys.argv[3:]
cols = {}
for n in names:
    try:
        cols[n] = dict(l.split() for l in open(f"{out}/sw_{coll}_{n}.col"))
    except OSError:
        cols[n] = {}
sizes = sorted({int(s) for c in cols.values() for s in c})
for s in sizes:
    print(f"{s:>10}" + "".join(f" {cols[n].get(str(s), '-'):>14}" for n in names))
PY
done
gpu_done
exit $?
