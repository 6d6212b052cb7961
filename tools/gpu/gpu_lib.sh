# Sourced by the GPU check scripts (one_gpu.sh, multi_gpu.sh, sweep.sh): the
# common setup and the case runner. Before sourcing: cd to the repository root.
# Sets C (the carry), OUT (logs: GPU_LOG_DIR, default /tmp/gpu_check_logs,
# packed at exit into logs.tgz in the caller's $OUT, default /tmp/out),
# NCCL_DIR, MK_LD / NC_LD (library paths for mkccl / NCCL runs), P (mkccl's
# plugins), fail (a check beside the cases failed), T0 and BUDGET
# (ONE_GPU_BUDGET_S, seconds for all cases).
# Every case passes, fails or is not run (cut for time, not built); gpu_done
# prints how many of each and fails the run on a failure or a case not run. A
# case the caller did not select (ONE_GPU_CASES, a regex on names, or the
# scripts' *_ONLY sections) is not part of the run and is not counted.
# tests/tools/test_gpu_lib.sh checks this on the host, with stub cases.
C=$PWD/.carry
OUT_FINAL=${OUT:-/tmp/out}
OUT=${GPU_LOG_DIR:-/tmp/gpu_check_logs}   # logs here, packed into one archive at the end
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
if command -v nvidia-smi >/dev/null; then
  echo "== $(nvidia-smi -L | head -8 | tr '\n' ';') NCCL at ${NCCL_DIR:-<none>}"
  nvidia-smi --query-gpu=name,driver_version,compute_mode,mig.mode.current --format=csv,noheader | sort | uniq -c
else
  echo "== no nvidia-smi here; NCCL at ${NCCL_DIR:-<none>}"
fi

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
declare -gA GPU_CASE=() # name -> pass | fail | notrun
gpu_selected() { [[ $1 =~ ${ONE_GPU_CASES:-.} ]]; }
gpu_case() { # name, pass|fail|notrun, summary line
  GPU_CASE[$1]=$2
  echo "$3" | tee -a "$OUT/summary.txt"
}
# A case that cannot run here (a program that was not built): not run.
not_run() { # name, why
  gpu_selected "$1" && gpu_case "$1" notrun "NOTRUN $1 ($2)"
}
# name, time limit, env..., -- command...
t() {
  local name=$1 lim=$2; shift 2
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  gpu_selected "$name" || return 0
  if (($(left) < lim)); then
    gpu_case "$name" notrun "NOTRUN $name (time: $(left) s of the budget left, the case needs $lim)"
    return
  fi
  local t1=$SECONDS
  env "${envs[@]}" timeout -s KILL "$lim" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  if ((rc == 0)); then gpu_case "$name" pass "PASS $name ($((SECONDS - t1)) s)"
  else
    gpu_case "$name" fail "FAIL $name rc=$rc ($((SECONDS - t1)) s$( ((rc == 137)) && echo ', killed at the limit'))"
    grep -v "^launched\|watchdog" "$OUT/$name.log" | tail -12 | sed 's/^/  | /'
    grep "watchdog" "$OUT/$name.log" | tail -6 | sed 's/^/  w /'
  fi
  sleep "${GPU_CASE_PAUSE_S:-1}"
}

# A case that passed without running what it is about (a fallback) fails.
# One that failed or did not run is counted already; one never started that
# the caller selected is a mistake in the script, and fails too.
need() { # name, pattern: the log must say it
  gpu_selected "$1" || return 0
  case ${GPU_CASE[$1]:-} in
    pass) grep -q -- "$2" "$OUT/$1.log" || gpu_case "$1" fail "FAIL $1: no '$2' in its log" ;;
    fail|notrun) ;;
    *) gpu_case "$1" fail "FAIL $1: no such case ran, so '$2' was not checked" ;;
  esac
}

# The end of a run: the counts, and its status (return it: gpu_done; exit $?).
gpu_done() {
  local ran=0 passed=0 failed=0 notrun=0 s
  for s in "${GPU_CASE[@]}"; do
    case $s in
      pass) ran=$((ran + 1)) passed=$((passed + 1)) ;;
      fail) ran=$((ran + 1)) failed=$((failed + 1)) ;;
      notrun) notrun=$((notrun + 1)) ;;
    esac
  done
  local verdict=passed
  ((failed || notrun || fail)) && verdict=FAILED
  echo "== done in $((SECONDS - T0)) s: ran $ran, passed $passed, failed $failed, not run $notrun$( ((fail)) &&
    echo ', and a check beside the cases failed'): $verdict" | tee -a "$OUT/summary.txt"
  [[ $verdict == passed ]]
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
    gpu_case nt_build fail "FAIL nt_build: no nccl-tests sources in $NT_SRC (put them in /tmp/nccl-tests-src, then tools/gpu/pack.sh)"; return
  fi
  if [[ ! -e $NCCL_DIR/include/nccl.h || ! -e $NCCL_DIR/lib/libnccl.so.2 ]]; then
    gpu_case nt_build fail "FAIL nt_build: no NCCL include/nccl.h + lib/libnccl.so.2 at '${NCCL_DIR}' (python3 nvidia.nccl)"; return
  fi
  [[ -x $NT_BIN/all_reduce_perf ]] ||
    t nt_build 150 -- tools/gpu/nccl_tests_build.sh "$NT_SRC" "$NCCL_DIR/include" "$NCCL_DIR/lib" "$NT_BIN" "${NT_PROGS[@]}"
  grep -h "^nccl-tests:" "$OUT/nt_build.log" 2>/dev/null | sed 's/^/  /'
  echo "  nccl-tests arguments: ${NT_ARGV[*]}"
  local NT_RAN=() p
  for p in "${NT_PROGS[@]}"; do
    if [[ ! -x $NT_BIN/${p}_perf ]]; then
      not_run "nt_${p}_nccl" "not built"; not_run "nt_${p}_mkccl" "not built"; continue
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
