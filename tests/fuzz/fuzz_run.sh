#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time from its corpus; new inputs go
# to a scratch folder (the corpus in the tree is not touched). Prints the
# executions; a crash fails (its input is left in the scratch folder).
#   fuzz_run.sh FUZZER CORPUS SCRATCH SECONDS
set -euo pipefail
fuzzer="$1" corpus="$2" scratch="$3" secs="$4"
rm -rf "$scratch" && mkdir -p "$scratch/new"
cd "$scratch"
"$fuzzer" -max_total_time="$secs" -timeout=10 -print_final_stats=1 -close_fd_mask=1 new "$corpus" 2>fuzz.log || {
  tail -60 fuzz.log
  exit 1
}
grep -E "^stat::number_of_executed_units|^stat::new_units_added|^Done" fuzz.log || true
