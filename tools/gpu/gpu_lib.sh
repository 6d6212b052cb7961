# Sourced by the GPU check scripts (one_gpu.sh, multi_gpu.sh): the common
# setup and the case runner. Before sourcing: cd to the repository root.
# Sets C (the carry), OUT (logs, packed into $OUT_FINAL/logs.tgz at exit),
# NCCL_DIR, MK_LD / NC_LD (library paths for mkccl / NCCL runs), P (mkccl's
# plugins), fail, T0 and BUDGET (ONE_GPU_BUDGET_S, seconds for all cases).
C=$PWD/.carry
OUT_FINAL=${OUT:-/tmp/out}
OUT=/tmp/gpu_check_logs   # logs here, packed at the end (few files come back)
rm -rf "$OUT"; mkdir -p "$OUT" "$OUT_FINAL"
trap 'tar czf "$OUT_FINAL/logs.tgz" -C "$OUT" . 2>/dev/null' EXIT
T0=$SECONDS
BUDGET=${ONE_GPU_BUDGET_S:-520}
NCCL_DIR=${ONE_GPU_NCCL_DIR:-$(python3 -c "import nvidia.nccl,os;print(os.path.dirname(nvidia.nccl.__path__[0]+'/x'))" 2>/dev/null)}
# NVLink multicast stays off (it can take a shared host's GPUs out of service).
export NCCL_NVLS_ENABLE=0 NCCL_DEBUG=${NCCL_DEBUG:-WARN}
MK_LD=$C/lib:$C/deps:/usr/local/cuda/lib64
NC_LD=$NCCL_DIR/lib:$C/deps:/usr/local/cuda/lib64
P=$C/lib/mkccl
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")
echo "== $(nvidia-smi -L | head -8 | tr '\n' ';') NCCL at ${NCCL_DIR:-<none>}"
nvidia-smi --query-gpu=name,driver_version,compute_mode,mig.mode.current --format=csv,noheader | sort | uniq -c

# While a case runs: after $1 s, the stacks of every process matching $2.
stacks_after() {
  sleep "$1"
  command -v gdb >/dev/null || { echo "(no gdb: wchan only)" >> "$OUT/stacks_$3.txt"; }
  for pid in $(pgrep -f "$2"); do
    echo "=== pid $pid $(tr '\0' ' ' < /proc/$pid/cmdline | head -c 200)" >> "$OUT/stacks_$3.txt"
    if command -v gdb >/dev/null; then
      timeout 20 gdb -p "$pid" -batch -ex "thread apply all bt 12" 2>&1 | grep -E "^#|^Thread" >> "$OUT/stacks_$3.txt"
    else
      for t in /proc/$pid/task/*; do echo "$(cat $t/comm) $(cat $t/wchan)" >> "$OUT/stacks_$3.txt"; done
    fi
  done
}

left() { echo $((BUDGET - (SECONDS - T0))); }
fail=0
# name, time limit, env..., -- command...
t() {
  local name=$1 lim=$2; shift 2
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  [[ $name =~ ${ONE_GPU_CASES:-.} ]] || return 0
  if (($(left) < lim)); then echo "SKIP $name (time)" | tee -a "$OUT/summary.txt"; return; fi
  local t1=$SECONDS
  env "${envs[@]}" timeout -s KILL "$lim" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  if ((rc == 0)); then echo "PASS $name ($((SECONDS - t1)) s)" | tee -a "$OUT/summary.txt"
  else
    echo "FAIL $name rc=$rc ($((SECONDS - t1)) s$( ((rc == 137)) && echo ', killed at the limit'))" | tee -a "$OUT/summary.txt"
    grep -v "^launched\|watchdog" "$OUT/$name.log" | tail -12 | sed 's/^/  | /'
    grep "watchdog" "$OUT/$name.log" | tail -6 | sed 's/^/  w /'
    fail=1
  fi
  sleep 1
}

# A case that passed without running what it is about (a fallback) fails.
need() { # name, pattern: the log must say it
  [[ -f $OUT/$1.log ]] || return 0
  grep -q -- "$2" "$OUT/$1.log" || { echo "FAIL $1: no '$2' in its log" | tee -a "$OUT/summary.txt"; fail=1; }
}
# NVIDIA's nccl-tests, built here against NCCL's nccl.h, each program run with
# NCCL's libnccl.so.2 and with mkccl's (the arguments say how many GPUs: -g N
# in one process); fails on #wrong != 0, a non-zero exit or the wrong libnccl
# loaded (LD_DEBUG=libs); prints both side by side.
#   nccl_tests_section "ARGS" PER_RUN_LIMIT_S [LABEL (what ran, for the tables)]
nccl_tests_section() {
  local args=$1 lim=$2 label=${3:-1 rank}
  local NT_SRC=$C/nccl-tests-src NT_BIN=/tmp/nccl-tests-build
  local NT_PROGS=(${NT_PROGS:-all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv})
  local NT_ARGV
  read -ra NT_ARGV <<< "$args"
  if [[ ! -e $NT_SRC/src/common.cu ]]; then
    echo "FAIL nt_build: no nccl-tests sources in $NT_SRC (put them in /tmp/nccl-tests-src, then tools/gpu/pack.sh)" | tee -a "$OUT/summary.txt"; fail=1; return
  fi
  if [[ ! -e $NCCL_DIR/include/nccl.h || ! -e $NCCL_DIR/lib/libnccl.so.2 ]]; then
    echo "FAIL nt_build: no NCCL include/nccl.h + lib/libnccl.so.2 at '${NCCL_DIR}' (python3 nvidia.nccl)" | tee -a "$OUT/summary.txt"; fail=1; return
  fi
  [[ -x $NT_BIN/all_reduce_perf ]] ||
    t nt_build 150 -- tools/gpu/nccl_tests_build.sh "$NT_SRC" "$NCCL_DIR/include" "$NCCL_DIR/lib" "$NT_BIN" "${NT_PROGS[@]}"
  grep -h "^nccl-tests:" "$OUT/nt_build.log" 2>/dev/null | sed 's/^/  /'
  echo "  nccl-tests arguments: ${NT_ARGV[*]}"
  local NT_RAN=() p
  for p in "${NT_PROGS[@]}"; do
    if [[ ! -x $NT_BIN/${p}_perf ]]; then
      # Not built: a failed build already failed the section; a build skipped for time did not.
      echo "SKIP nt_${p} (not built)" | tee -a "$OUT/summary.txt"; continue
    fi
    # The loader trace says which libnccl.so.2 each run really initialised.
    t "nt_${p}_nccl" "$lim" LD_LIBRARY_PATH=$NC_LD LD_DEBUG=libs LD_DEBUG_OUTPUT=$OUT/nt_${p}_nccl.ld -- "$NT_BIN/${p}_perf" "${NT_ARGV[@]}"
    t "nt_${p}_mkccl" "$lim" LD_LIBRARY_PATH=$MK_LD LD_DEBUG=libs LD_DEBUG_OUTPUT=$OUT/nt_${p}_mkccl.ld -- "$NT_BIN/${p}_perf" "${NT_ARGV[@]}"
    [[ -e $OUT/nt_${p}_nccl.log || -e $OUT/nt_${p}_mkccl.log ]] && NT_RAN+=("$p")
  done
  if ((${#NT_RAN[@]})); then
    python3 tools/gpu/nccl_tests_table.py --label "$label" "$OUT" "$C/lib/libnccl.so.2" "$NCCL_DIR/lib/libnccl.so.2" "${NT_RAN[@]}" > "$OUT/nt_table.txt" 2>&1
    local ntrc=$?
    cat "$OUT/nt_table.txt"
    grep -E "^(PASS|FAIL) nt_" "$OUT/nt_table.txt" >> "$OUT/summary.txt"
    ((ntrc == 0)) || fail=1
  fi
}
