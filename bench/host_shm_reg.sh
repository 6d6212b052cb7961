#!/usr/bin/env bash
# Host Send/Recv and AllGather over SHM, 2 processes, three kinds of
# buffers measured in this one run, size by size: plain malloc'ed ones
# (copied through the segments), registered ones (mkccl-perf --reg 1, under
# MKCCL_SHM_CMA=1: a registered send buffer is read in place by its
# receiver with process_vm_readv) and ncclMemAlloc'ed ones (--mem 1, the
# default parameters: the receiver maps the sender's buffer and copies from
# it in place; plugins/transport-shm). Prints an nccl-tests-style table:
# out-of-place time and busbw of each, and each single copy's busbw over
# the plain one's. Each size runs the three one after the other, so a busy
# machine weighs on all alike.
#   bench/host_shm_reg.sh [BUILD_DIR]    (default build; e.g. build-noc)
# HOST_SHM_REG_MIN/MAX (1M/256M), _FACTOR (2), _ITERS (20), _WARMUP (5),
# HOST_SHM_REG_COLLS ("sendrecv all_gather"), HOST_SHM_REG_RANKS (2),
# HOST_SHM_REG_THP=1: every buffer asked for huge pages (mkccl-perf --thp 1).
# HOST_SHM_REG_MPIRUN: Open MPI's launcher (default mpirun).
# Where it and BUILD_DIR/bin/mkccl-mpi-shm exist, Send/Recv rows also get
# Open MPI's MPI_Sendrecv over vader with its single copy (CMA) and without
# (btl_vader_single_copy_mechanism cma / none), in the same round.
# Benchmarks print; they assert nothing. A run that reports #wrong says so.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}/bin
MIN=${HOST_SHM_REG_MIN:-1M}
MAX=${HOST_SHM_REG_MAX:-256M}
FACTOR=${HOST_SHM_REG_FACTOR:-2}
ITERS=${HOST_SHM_REG_ITERS:-20}
WARMUP=${HOST_SHM_REG_WARMUP:-5}
COLLS=${HOST_SHM_REG_COLLS:-sendrecv all_gather}
RANKS=${HOST_SHM_REG_RANKS:-2}
THP=${HOST_SHM_REG_THP:-0}
[[ -x $B/mkccl-perf && -x $B/mkccl-run ]] || { echo "no $B/mkccl-perf or $B/mkccl-run: build first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source bench/perf_lib.sh

# One mkccl-perf run at one size: "time busbw #wrong" (out of place), or "- - -".
#   run COLL SIZE REG MEM
run() {
  local coll=$1 size=$2 reg=$3 mem=$4 log=$tmp/log
  MKCCL_SHM_CMA=$reg MKCCL_CUDA_DISABLE=1 "$B/mkccl-run" -n "$RANKS" -- "$B/mkccl-perf" "$coll" -b "$size" -e "$size" \
    -n "$ITERS" -w "$WARMUP" -c 1 --reg "$reg" --mem "$mem" --thp "$THP" >"$log" 2>&1
  perf_row "$log" $? "$coll $size --reg $reg --mem $mem"
}

# Open MPI's busbw at one size, vader with single-copy mechanism $1.
MPIRUN=${HOST_SHM_REG_MPIRUN:-mpirun}
mpi_run() {
  "$MPIRUN" --allow-run-as-root -np "$RANKS" --bind-to none --mca btl vader,self \
    --mca btl_vader_single_copy_mechanism "$1" "$B/mkccl-mpi-shm" -b "$2" -e "$2" -n "$ITERS" -w "$WARMUP" \
    2>/dev/null | awk '!/^#/ && NF >= 6 {print $6; exit}'
}
have_mpi=0
command -v "$MPIRUN" >/dev/null && [[ -x $B/mkccl-mpi-shm ]] && have_mpi=1

echo "# mkccl host $COLLS over SHM, $RANKS processes, $(nproc) cores: plain (copied), registered (--reg 1, CMA)"
echo "# and ncclMemAlloc'ed (--mem 1, mapped) buffers, all measured in this run, size by size one after the other,"
echo "# out-of-place, $ITERS iterations after $WARMUP warm-up"
(( THP )) && echo "# plain and registered buffers asked for transparent huge pages (--thp 1)"
(( have_mpi )) && echo "# ompi-cma / ompi-none: Open MPI MPI_Sendrecv busbw over vader, single copy cma / none"
fmt="%-10s %10s  %9s %7s %6s  %9s %7s %6s  %9s %7s %6s  %8s %8s  %8s %9s\n"
printf "#$fmt" "" "" "plain" "" "" "reg" "" "" "mem" "" "" "" "" "" ""
printf "#$fmt" "coll" "size(B)" "time(us)" "busbw" "#wrong" "time(us)" "busbw" "#wrong" "time(us)" "busbw" "#wrong" \
  "reg/plain" "mem/plain" "ompi-cma" "ompi-none"
for coll in $COLLS; do
  for size in $(perf_sizes "$MIN" "$MAX" "$FACTOR"); do
    read -r t0 b0 w0 <<<"$(run "$coll" "$size" 0 0)"
    read -r t1 b1 w1 <<<"$(run "$coll" "$size" 1 0)"
    read -r t2 b2 w2 <<<"$(run "$coll" "$size" 0 1)"
    m1=-; m0=-
    if (( have_mpi )) && [[ $coll == sendrecv ]]; then
      m1=$(mpi_run cma "$size"); m0=$(mpi_run none "$size")
    fi
    printf " $fmt" "$coll" "$size" "$t0" "$b0" "$w0" "$t1" "$b1" "$w1" "$t2" "$b2" "$w2" "$(perf_ratio "$b0" "$b1")" \
      "$(perf_ratio "$b0" "$b2")" "${m1:--}" "${m0:--}"
  done
done
