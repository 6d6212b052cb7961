#!/usr/bin/env bash
# Profiler overhead on a 1 MB AllReduce (the aim: under 5% with all events).
# Two host ranks (one per core on a 2-core machine), shm and net transports;
# three configurations run interleaved, trial after trial, so that drifts of
# the machine hit all three alike: no profiler, profiler loaded with mask 0,
# all events. Prints one line per run, a median table, and the median of
# per-trial ratios (steadier on a noisy machine: slow phases hit both runs
# of a pair).
#   bench/profiler_overhead.sh [trials] [iterations] > prof.log
# Environment:
#   TRANSPORTS="shm net"  the transports measured (default both)
#   BASE=/other/build     before/after: also runs that build (its mkccl-run,
#                         mkccl-perf, libraries and profiler) as configurations
#                         base-none and base-all, interleaved with the others;
#                         ratios stay relative to this build's 'none'
set -euo pipefail
cd "$(dirname "$0")/.."
trials=${1:-15}
iters=${2:-400}
transports=${TRANSPORTS:-shm net}
base=${BASE:-}
B=$PWD/build
cfgs="none mask0 all"
[[ -n $base ]] && cfgs="none base-none mask0 all base-all"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for trial in $(seq "$trials"); do
  for tr in $transports; do
    for cfg in $cfgs; do
      env=()
      dir=$B
      [[ $cfg == base-* ]] && dir=$base
      P=$dir/lib/mkccl/libmkccl-profiler.so
      [[ $tr == net ]] && env+=(NCCL_SHM_DISABLE=1)
      case $cfg in
        mask0) env+=(NCCL_PROFILER_PLUGIN=$P MKCCL_PROFILER_MASK=0) ;;
        all | base-all) env+=(NCCL_PROFILER_PLUGIN=$P MKCCL_PROFILER_MASK=0xffff) ;;
      esac
      line=$(env "${env[@]}" MKCCL_PROFILER_DIR="$out" "$dir/bin/mkccl-run" -n 2 -- \
        "$dir/bin/mkccl-perf" all_reduce -b 1M -e 1M -n "$iters" -w 40 -c 0 | grep '^ *1048576')
      # out-of-place and in-place time (us) of rank 0
      echo "$tr $cfg $(echo "$line" | awk '{print $6, $10}')"
    done
  done
done | tee "$out/runs"
echo
echo "# median us per AllReduce over $trials trials (out-of-place, in-place), and the ratio to 'none'"
for tr in $transports; do
  for cfg in $cfgs; do
    for col in 3 4; do
      grep "^$tr $cfg " "$out/runs" | awk -v c=$col '{print $c}' | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'
    done | paste -sd' ' | sed "s/^/$tr $cfg /"
  done
done | awk '{ if ($2=="none") {b1=$3; b2=$4} printf "%s %-9s %10.1f %10.1f   %.3f %.3f\n", $1, $2, $3, $4, $3/b1, $4/b2 }'
# Paired: per trial, the ratio of oop+ip times of two configurations run one
# after the other; the median over trials cancels the machine's slow drifts
# (the medians above are two independent samples each).
echo
echo "# median over trials of the per-trial ratio of (oop + ip) times"
pairs="all/none mask0/none"
[[ -n $base ]] && pairs="all/none mask0/none base-all/base-none base-none/none all/base-all"
for tr in $transports; do
  for p in $pairs; do
    a=${p%/*} b=${p#*/}
    awk -v tr="$tr" -v a="$a" -v b="$b" '$1 == tr { if ($2 == a) ta[++na] = $3 + $4; if ($2 == b) tb[++nb] = $3 + $4 }
      END { n = na < nb ? na : nb; for (i = 1; i <= n; i++) print ta[i] / tb[i] }' "$out/runs" |
      sort -g | awk -v tr="$tr" -v p="$p" '{r[NR] = $1} END { m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2; printf "%s %-20s %.3f  (%d trials)\n", tr, p, m, NR }'
  done
done
