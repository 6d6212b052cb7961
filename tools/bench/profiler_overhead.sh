#!/usr/bin/env bash
# Profiler overhead on a 1 MB AllReduce (issue 8: < 5% with all events).
# Two host ranks (one per core on a 2-core machine), shm and net transports;
# three configurations run interleaved, trial after trial, so that drifts of
# the machine hit all three alike: no profiler, profiler loaded with mask 0,
# all events. Prints one line per run and a median table at the end.
#   tools/bench/profiler_overhead.sh [trials] [iterations] > prof.log
set -euo pipefail
cd "$(dirname "$0")/../.."
trials=${1:-15}
iters=${2:-400}
P=$PWD/build/lib/mkccl/libmkccl-profiler.so
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for trial in $(seq "$trials"); do
  for tr in shm net; do
    for cfg in none mask0 all; do
      env=()
      [[ $tr == net ]] && env+=(NCCL_SHM_DISABLE=1)
      case $cfg in
        mask0) env+=(NCCL_PROFILER_PLUGIN=$P MKCCL_PROFILER_MASK=0) ;;
        all) env+=(NCCL_PROFILER_PLUGIN=$P MKCCL_PROFILER_MASK=0xffff) ;;
      esac
      line=$(env "${env[@]}" MKCCL_PROFILER_DIR="$out" build/bin/mkccl-run -n 2 -- \
        build/bin/mkccl-perf all_reduce -b 1M -e 1M -n "$iters" -w 40 -c 0 | grep '^ *1048576')
      # out-of-place and in-place time (us) of rank 0
      echo "$tr $cfg $(echo "$line" | awk '{print $6, $10}')"
    done
  done
done | tee "$out/runs"
echo
echo "# median us per AllReduce over $trials trials (out-of-place, in-place), and the ratio to 'none'"
for tr in shm net; do
  for cfg in none mask0 all; do
    for col in 3 4; do
      grep "^$tr $cfg " "$out/runs" | awk -v c=$col '{print $c}' | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'
    done | paste -sd' ' | sed "s/^/$tr $cfg /"
  done
done | awk '{ if ($2=="none") {b1=$3; b2=$4} printf "%s %-6s %10.1f %10.1f   %.3f %.3f\n", $1, $2, $3, $4, $3/b1, $4/b2 }'
