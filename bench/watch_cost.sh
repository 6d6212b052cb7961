#!/usr/bin/env bash
# What the peer watch costs the hot path: AllReduce of 8 B (latency) and
# 64 MB (bus bandwidth) on 2 host ranks, over SHM and over net-socket, with
# MKCCL_WATCH=0 and =1 alternating in the same run (which goes first
# alternates too), REPS times each; the
# table gives the median of each column (mkccl-perf's out-of-place time
# and busbw, every result checked).
#   bench/watch_cost.sh [BIN_DIR] [REPS]   (BIN_DIR: mkccl-run and mkccl-perf; default build/bin)
set -uo pipefail
BIN=${1:-build/bin}
REPS=${2:-5}
RANKS=${WATCH_COST_RANKS:-2}
run() { # watch, transport env, bytes, iters -> "time busbw wrong"
  env MKCCL_WATCH="$1" $2 "$BIN/mkccl-run" -n "$RANKS" -- "$BIN/mkccl-perf" all_reduce -b "$3" -e "$3" -n "$4" -w 10 2>&1 |
    awk '$1 ~ /^[0-9]+$/ && NF >= 13 {print $6, $8, $9}'
}
median() { sort -g | awk '{v[NR] = $1} END {print NR ? v[int((NR + 1) / 2)] : "-"}'; }
echo "== $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); $RANKS ranks, $REPS reps"
printf "| transport | size | watch off: time (us) | on: time (us) | off: busbw (GB/s) | on: busbw (GB/s) |\n|---|---|---|---|---|---|\n"
bad=0
for tr in shm net; do
  envs=""
  [[ $tr == net ]] && envs="NCCL_SHM_DISABLE=1"
  for size in 8 64M; do
    iters=2000
    [[ $size == 64M ]] && iters=20
    : > /tmp/watch_cost.0 && : > /tmp/watch_cost.1
    for ((r = 0; r < REPS; r++)); do
      for w in $((r % 2)) $((1 - r % 2)); do
        line=$(run "$w" "$envs" "$size" "$iters")
        [[ -n $line ]] || { echo "watch_cost: no result ($tr $size MKCCL_WATCH=$w)" >&2; bad=1; continue; }
        set -- $line
        [[ $3 == 0 ]] || { echo "watch_cost: $3 wrong elements ($tr $size MKCCL_WATCH=$w)" >&2; bad=1; }
        echo "$1 $2" >> /tmp/watch_cost.$w
      done
    done
    printf "| %s | %s | %s | %s | %s | %s |\n" "$tr" "$size" \
      "$(cut -d' ' -f1 /tmp/watch_cost.0 | median)" "$(cut -d' ' -f1 /tmp/watch_cost.1 | median)" \
      "$(cut -d' ' -f2 /tmp/watch_cost.0 | median)" "$(cut -d' ' -f2 /tmp/watch_cost.1 | median)"
    echo "  every run (us): off $(cut -d' ' -f1 /tmp/watch_cost.0 | tr '\n' ' '); on $(cut -d' ' -f1 /tmp/watch_cost.1 | tr '\n' ' ')" >&2
  done
done
exit $bad
