#!/usr/bin/env bash
# Host Send/Recv over the net (net-socket, SHM and P2P disabled), 2
# processes: registered buffers (mkccl-perf --reg 1: sent from and
# received into the user's buffers in place, plugins/transport-net) against
# unregistered ones, and registered with MKCCL_NET_PTR=0 (the copy path with
# the same buffers), all measured in this one run, size by size, one after
# the other, so a busy machine weighs on each alike. Prints out-of-place
# time and busbw of each, and the ratios to unregistered.
#   bench/net_reg.sh [BUILD_DIR]    (default build; e.g. build-noc)
# NET_REG_MIN/MAX (1M/256M), _FACTOR (2), _ITERS (10), _WARMUP (3),
# NET_REG_ROUNDS (1): the whole table again, NET_REG_RANKS (2).
# Benchmarks print; they assert nothing. A run that reports #wrong says so.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}/bin
MIN=${NET_REG_MIN:-1M}
MAX=${NET_REG_MAX:-256M}
FACTOR=${NET_REG_FACTOR:-2}
ITERS=${NET_REG_ITERS:-10}
WARMUP=${NET_REG_WARMUP:-3}
ROUNDS=${NET_REG_ROUNDS:-1}
RANKS=${NET_REG_RANKS:-2}
[[ -x $B/mkccl-perf && -x $B/mkccl-run ]] || { echo "no $B/mkccl-perf or $B/mkccl-run: build first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source bench/perf_lib.sh

# One mkccl-perf run at one size: "time busbw #wrong" (out of place), or "- - -".
run() {
  local size=$1 reg=$2 ptr=$3 log=$tmp/log
  NCCL_SHM_DISABLE=1 NCCL_P2P_DISABLE=1 MKCCL_NET_PTR=$ptr "$B/mkccl-run" -n "$RANKS" -- "$B/mkccl-perf" sendrecv \
    -b "$size" -e "$size" -n "$ITERS" -w "$WARMUP" -c 1 --reg "$reg" >"$log" 2>&1
  perf_row "$log" $? "size $size --reg $reg MKCCL_NET_PTR=$ptr"
}

echo "# mkccl host sendrecv over net-socket, $RANKS processes, $(nproc) cores: unregistered, registered (--reg 1,"
echo "# in place), registered with MKCCL_NET_PTR=0 (copied); one after the other per size, out of place,"
echo "# $ITERS iterations after $WARMUP warm-up; busbw GB/s"
printf "#%-5s %11s  %10s %7s %6s  %10s %7s %6s  %10s %7s %6s  %9s %9s\n" "" "" "unreg" "" "" "reg" "" "" "reg,PTR=0" \
  "" "" "" ""
printf "#%-5s %11s  %10s %7s %6s  %10s %7s %6s  %10s %7s %6s  %9s %9s\n" "round" "size(B)" "time(us)" "busbw" "#wrong" \
  "time(us)" "busbw" "#wrong" "time(us)" "busbw" "#wrong" "reg/unreg" "copy/unrg"
for round in $(seq 1 "$ROUNDS"); do
  for size in $(perf_sizes "$MIN" "$MAX" "$FACTOR"); do
    read -r t0 b0 w0 <<<"$(run "$size" 0 1)"
    read -r t1 b1 w1 <<<"$(run "$size" 1 1)"
    read -r t2 b2 w2 <<<"$(run "$size" 1 0)"
    printf " %-5s %11s  %10s %7s %6s  %10s %7s %6s  %10s %7s %6s  %9s %9s\n" "$round" "$size" "$t0" "$b0" "$w0" "$t1" \
      "$b1" "$w1" "$t2" "$b2" "$w2" "$(perf_ratio "$b0" "$b1")" "$(perf_ratio "$b0" "$b2")"
  done
done
