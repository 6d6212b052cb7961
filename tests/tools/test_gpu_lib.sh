#!/usr/bin/env bash
# tools/gpu/gpu_lib.sh on the host, with stub cases for what the GPU scripts
# run: the summary counts ran / passed / failed / not run, and the run fails
# on a failed case, a case cut for time, a case not built or a `need` that
# does not hold, but not on a case the caller left out of the run.
#   test_gpu_lib.sh SOURCE_DIR
set -uo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bad=0

# scenario NAME WANT_RC WANT_SUMMARY [VAR=VALUE...] -- BODY: sources gpu_lib.sh
# in a fresh bash, runs BODY, ends with gpu_done.
scenario() {
  local name=$1 want_rc=$2 want=$3; shift 3
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  local out
  out=$(cd "$src" && env OUT="$work/$name" GPU_LOG_DIR="$work/$name.logs" GPU_CASE_PAUSE_S=0 "${envs[@]}" \
    bash -c "source tools/gpu/gpu_lib.sh >/dev/null; $1
gpu_done; exit \$?" 2>&1)
  local rc=$?
  local summary
  summary=$(grep "^== done" <<<"$out")
  if [[ $rc != "$want_rc" || $summary != *"$want"* ]]; then
    echo "FAIL $name: rc $rc (want $want_rc), summary '$summary' (want '$want')"
    sed 's/^/  | /' <<<"$out"
    bad=1
  else
    echo "ok   $name: rc $rc, $summary"
  fi
}

scenario all_pass 0 "ran 2, passed 2, failed 0, not run 0: passed" -- \
  't ok 5 -- true; t says 5 -- echo hello; need says hello'
scenario one_fails 1 "ran 2, passed 1, failed 1, not run 0: FAILED" -- \
  't ok 5 -- true; t bad 5 -- false'
scenario cut_for_time 1 "ran 1, passed 1, failed 0, not run 1: FAILED" ONE_GPU_BUDGET_S=30 -- \
  't ok 5 -- true; t slow 60 -- true; need slow anything'
scenario need_missing 1 "ran 1, passed 0, failed 1, not run 0: FAILED" -- \
  't quiet 5 -- true; need quiet "via p2p"'
scenario need_no_case 1 "ran 1, passed 0, failed 1, not run 0: FAILED" -- \
  'need typo "via p2p"'
scenario not_built 1 "ran 0, passed 0, failed 0, not run 2: FAILED" -- \
  'not_run nt_x_nccl "not built"; not_run nt_x_mkccl "not built"'
scenario table_check 1 "ran 1, passed 1, failed 0, not run 0, and a check beside the cases failed: FAILED" -- \
  't ok 5 -- true; fail=1'
# The caller asked for a subset: what it left out is not part of the run.
scenario subset 0 "ran 1, passed 1, failed 0, not run 0: passed" ONE_GPU_CASES='^ok$' -- \
  't ok 5 -- true; t bad 5 -- false; t slow 100000 -- true; need bad x; not_run nt_x_nccl "not built"'
# The summary file carries the lines, the NOTRUN one included.
if grep -q "^NOTRUN slow (time" "$work/cut_for_time.logs/summary.txt"; then echo "ok   summary.txt names the case not run"
else echo "FAIL summary.txt: no NOTRUN line"; cat "$work/cut_for_time.logs/summary.txt"; bad=1; fi
exit $bad
