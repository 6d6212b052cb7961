#!/usr/bin/env bash
# Variants of mkccl's host AllReduce next to each other, from .carry/, on a
# machine whose cores give every rank and channel its own: for each rank
# count, one line per variant with the out-of-place busbw per size, and
# Open MPI's line (tcp or vader, unpacked by ompi_carry.sh) in the same run.
# On the build machine:
#   tools/dev/build.sh && PACK_HOST_BENCH=1 PACK_NVJITLINK=0 tools/gpu/pack.sh
# then on the measuring machine, from the repository root with .carry/ beside the tree:
#   HOST_SWEEP='c1= c4=MKCCL_HOST_NCHANNELS=4' bash bench/host_sweep.sh
# HOST_SWEEP: "name=ENV[,ENV...] ..." (empty ENV: the defaults; HOST_SWEEP_WRAP=PROGRAM
# among them runs each rank as PROGRAM mkccl-perf ..., e.g. bench/pin_rank.sh);
# HOST_SWEEP_PATH: shm (default) or net (NCCL_SHM_DISABLE=1, Open MPI tcp);
# HOST_SWEEP_RANKS (default "2 4"), HOST_SWEEP_MIN/MAX (1M/256M), HOST_SWEEP_ITERS (20),
# HOST_SWEEP_WARMUP (3, per size and at the ends, for both libraries); HOST_SWEEP_FACTOR (4, between sizes);
# HOST_SWEEP_TIME=1: times (us) instead of busbw (for latency).
# HOST_SWEEP_CPU=1: after each line, the machine's CPU use during that run
# from /proc/stat: cores busy on average (user+system) and steal.
# Benchmarks print; they assert nothing. A variant that reports #wrong says so.
set -uo pipefail
cd "$(dirname "$0")/.."
C=$PWD/.carry
B=$C/bin
SWEEP=${HOST_SWEEP:-default=}
PATH_KIND=${HOST_SWEEP_PATH:-shm}
RANKS=${HOST_SWEEP_RANKS:-2 4}
MIN=${HOST_SWEEP_MIN:-1M}
MAX=${HOST_SWEEP_MAX:-256M}
ITERS=${HOST_SWEEP_ITERS:-20}
export LD_LIBRARY_PATH=$C/lib:$C/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
OMPI=/tmp/ompi-root
have_ompi=0
if [[ -d $C/ompi-debs ]] && bench/ompi_carry.sh unpack "$C/ompi-debs" "$OMPI" >/dev/null; then
  eval "$(bench/ompi_carry.sh env "$OMPI")"
  export PMIX_MCA_pcompress_base_silence_warning=1
  have_ompi=1
fi
base_env=()
btl=vader,self
if [[ $PATH_KIND == net ]]; then
  base_env=(NCCL_SHM_DISABLE=1)
  btl="tcp,self --mca btl_tcp_if_include lo"
fi
WARMUP=${HOST_SWEEP_WARMUP:-3}
ARGS=(all_reduce -b "$MIN" -e "$MAX" -f "${HOST_SWEEP_FACTOR:-4}" -n "$ITERS" -w "$WARMUP")

# One line: name, then out-of-place busbw per size; "!" after a wrong size.
# busbw in column 8 and #wrong in 9 (mkccl-perf), or busbw in 6
# (mkccl-mpi-allreduce); times in 6 and 4.
TIME=${HOST_SWEEP_TIME:-0}
row() {
  local col=${2:-8}
  ((TIME)) && col=$((col - 2))
  awk -v name="$1" -v col="$col" -v mk="${2:-8}" '/^ *[0-9]+ +[0-9]+ +[a-z]/ {
      v = v sprintf(" %7.2f%s", $col, (mk != 8 || $9 == 0 ? " " : "!")) }
    END { printf "%-14s%s\n", name, v }'
}
header() {
  awk -v name="bytes" '/^ *[0-9]+ +[0-9]+ +[a-z]/ { v = v sprintf(" %7s ", $1 >= 1048576 ? $1 / 1048576 "M" : $1 >= 1024 ? $1 / 1024 "K" : $1) }
    END { printf "%-14s%s\n", name, v }'
}

CPU=${HOST_SWEEP_CPU:-0}
cpu_snap() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $5 + $6, $9; exit }' /proc/stat; }
# cpu_report BEFORE AFTER (two cpu_snap lines): "busy B cores, steal S%" between them.
cpu_report() {
  ((CPU)) || return 0
  awk -v a="$1" -v b="$2" -v n="$(nproc)" 'BEGIN {
      split(a, x, " "); split(b, y, " "); busy = y[1] - x[1]; idle = y[2] - x[2]; steal = y[3] - x[3]
      total = busy + idle + steal; if (total <= 0) total = 1
      printf "%14s busy %.1f of %d cores, steal %.1f%%\n", "", n * busy / total, n, 100 * steal / total }'
}

echo "# host_sweep: $(nproc) cores; path $PATH_KIND; all_reduce float sum, out-of-place $( ((TIME)) && echo "time (us)" || echo "busbw (GB/s)")"
for n in $RANKS; do
  echo "## $n ranks"
  first=1
  for v in $SWEEP; do
    name=${v%%=*}
    envs=${v#*=}
    IFS=, read -ra extra <<<"$envs"
    wrap=()
    for e in "${extra[@]}"; do [[ $e == HOST_SWEEP_WRAP=* ]] && wrap=("${e#*=}"); done
    log=$(mktemp)
    before=$(cpu_snap)
    env "${base_env[@]}" "${extra[@]}" "$B/mkccl-run" -n "$n" -- "${wrap[@]}" "$B/mkccl-perf" "${ARGS[@]}" >"$log" 2>&1 ||
      echo "$name: rc=$? ($(grep -m1 -iE 'error|fail' "$log"))"
    ((first)) && header <"$log"
    first=0
    row "$name" <"$log"
    cpu_report "$before" "$(cpu_snap)"
    rm -f "$log"
  done
  if ((have_ompi)); then
    before=$(cpu_snap)
    # shellcheck disable=SC2086 # btl carries its own --mca words
    orterun --allow-run-as-root --oversubscribe --bind-to none -np "$n" --mca btl $btl \
      "$B/mkccl-mpi-allreduce" -b "$MIN" -e "$MAX" -f "${HOST_SWEEP_FACTOR:-4}" -n "$ITERS" -w "$WARMUP" 2>/dev/null | row "ompi-${btl%%,*}" 6
    cpu_report "$before" "$(cpu_snap)"
  fi
done
