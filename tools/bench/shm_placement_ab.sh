#!/usr/bin/env bash
# Host AllReduce over SHM against Open MPI's vader on a machine whose CPUs
# move under it (a VM): each run is tagged with where the host had two of
# its CPUs just before and just after it, by the one-way latency of a cache
# line between them (mkccl-slot-stream): "core" under 40 ns (one core's two
# threads, it seems), "near" up to 160 (one cache), "apart" above; "mixed"
# when the two differ. So runs compare with runs of the same placement.
# Variants alternate round by round. Benchmarks print; they assert nothing.
#   tools/bench/shm_placement_ab.sh [rounds] [ranks...]     (defaults 6, 2)
#   AB_VARIANTS "name=ENV[,ENV] ..." (default "mk= cached=MKCCL_HOST_STREAM_STORES=0");
#   AB_MIN/AB_MAX (1M/16M), AB_ITERS (40), AB_BIN (build/bin).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-6}
shift || true
RANKS=${*:-2}
B=${AB_BIN:-build/bin}
VARIANTS=${AB_VARIANTS:-mk= cached=MKCCL_HOST_STREAM_STORES=0}
MIN=${AB_MIN:-1M}
MAX=${AB_MAX:-16M}
ITERS=${AB_ITERS:-40}
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
command -v mpirun >/dev/null || MPIRUN=()

probe() { "$B/mkccl-slot-stream" 16 | awk '{ print $2 }'; }
class() { if (($1 < 40)); then echo core; elif (($1 <= 160)); then echo near; else echo apart; fi; }
tag() { local a b; a=$(class "$1") b=$(class "$2"); [[ $a == "$b" ]] && echo "$a" || echo mixed; }
# busbw per size from mkccl-perf (column 8) or mkccl-mpi-allreduce (6)
cols() { awk -v c="$1" '/^ *[0-9]+ +[0-9]+ +[a-z]/ { printf " %7.2f", $c }'; }

echo "# $(date -u +%FT%TZ) $(nproc) cores; mkccl $(git rev-parse --short HEAD 2>/dev/null); all_reduce float sum out-of-place busbw (GB/s), $MIN..$MAX x4"
for n in $RANKS; do
  echo "## $n ranks: round variant tag (one-way ns before/after): busbw per size"
  for r in $(seq 1 "$ROUNDS"); do
    for v in $VARIANTS vader; do
      name=${v%%=*}
      before=$(probe)
      if [[ $name == vader ]]; then
        ((${#MPIRUN[@]})) || continue
        row=$("${MPIRUN[@]}" -np "$n" --mca btl vader,self "$B/mkccl-mpi-allreduce" -b "$MIN" -e "$MAX" -f 4 \
          -n "$ITERS" -w 5 2>/dev/null | cols 6)
      else
        IFS=, read -ra envs <<<"${v#*=}"
        row=$(env "${envs[@]}" "$B/mkccl-run" -n "$n" -- "$B/mkccl-perf" all_reduce -b "$MIN" -e "$MAX" -f 4 \
          -n "$ITERS" -w 5 -c 0 2>/dev/null | cols 8)
      fi
      after=$(probe)
      printf "%2d %-8s %-5s (%3s/%3s):%s\n" "$r" "$name" "$(tag "$before" "$after")" "$before" "$after" "$row"
    done
  done
done
