#!/usr/bin/env bash
# Host collectives over sockets (NCCL_SHM_DISABLE=1, Open MPI tcp beside
# them where .carry/ has it), each part a table of bench/host_sweep.sh
# (docs/perf/host-net.md).
# On the build machine:
#   tools/dev/build.sh && PACK_HOST_BENCH=1 PACK_NVJITLINK=0 tools/gpu/pack.sh
# then on the measuring machine, from the repository root with .carry/ beside the tree:
#   bash bench/host_net_check.sh [PARTS]
# PARTS (default ABCDEF): A 4 and 2 ranks at 1 and 4 MB, rounds; B 1 KB to
# 256 MB; C small sizes, times; D 8 and 3 ranks; E threads and channels of a
# 4-rank run; F Send/Recv and AlltoAll. Each part runs under a hard limit
# (A 200 s, B and C 150, D 120, E 40, F 60 per run of 8).
# HOST_NET_CHECK_VARIANTS adds variants ("name=ENV,ENV ...") to A, C and D.
# Benchmarks print; they assert nothing.
set -u
cd "$(dirname "$0")/.."
PARTS=${1:-ABCDEF}
V="new= ${HOST_NET_CHECK_VARIANTS:-}"
S=bench/host_sweep.sh
export HOST_SWEEP_PATH=net
part() { [[ $PARTS == *$1* ]]; }
if part A; then
  echo "### A: 1M/4M rounds"
  HOST_SWEEP_MIN=1M HOST_SWEEP_MAX=4M HOST_SWEEP_ITERS=200 HOST_SWEEP_WARMUP=30 HOST_SWEEP_RANKS='4 4 4 2' \
    HOST_SWEEP="$V" timeout 200 bash $S
fi
if part B; then
  echo "### B: 1K to 256M"
  HOST_SWEEP_MIN=1K HOST_SWEEP_MAX=256M HOST_SWEEP_ITERS=20 HOST_SWEEP_WARMUP=3 HOST_SWEEP_RANKS='2 4' \
    HOST_SWEEP="new=" timeout 150 bash $S
fi
if part C; then
  echo "### C: small sizes (us)"
  HOST_SWEEP_TIME=1 HOST_SWEEP_MIN=4K HOST_SWEEP_MAX=512K HOST_SWEEP_FACTOR=2 HOST_SWEEP_ITERS=200 \
    HOST_SWEEP_WARMUP=30 HOST_SWEEP_RANKS='4 3 2' HOST_SWEEP="$V" timeout 150 bash $S
fi
if part D; then
  echo "### D: 8 and 3 ranks"
  HOST_SWEEP_MIN=1M HOST_SWEEP_MAX=16M HOST_SWEEP_ITERS=50 HOST_SWEEP_WARMUP=5 HOST_SWEEP_RANKS='8 3' \
    HOST_SWEEP="$V" timeout 120 bash $S
fi
C=$PWD/.carry
export LD_LIBRARY_PATH=$C/lib:$C/deps
if part E; then
  echo "### E: threads and channels, 4 ranks at 1 MB"
  NCCL_SHM_DISABLE=1 timeout 40 bash bench/thread_cpu.sh 2 3 -- "$C/bin/mkccl-run" -n 4 -x NCCL_DEBUG=INFO \
    -x NCCL_DEBUG_SUBSYS=INIT -- "$C/bin/mkccl-perf" all_reduce -b 1M -e 1M -n 2000 -w 10 -c 0 2>&1 |
    grep -E 'host channel|^thread|^mkccl-|^ +1048576' | sed 's/^.*NCCL INFO //' | sort | uniq -c
fi
if part F; then
  echo "### F: Send/Recv and AlltoAll, busbw (GB/s)"
  for coll in sendrecv alltoall; do
    for n in 2 4; do
      printf '%-9s %d ranks' "$coll" "$n"
      NCCL_SHM_DISABLE=1 timeout 60 "$C/bin/mkccl-run" -n "$n" -- "$C/bin/mkccl-perf" "$coll" \
        -b 64K -e 16M -f 4 -n 50 -w 5 -c 1 2>&1 | awk '/^ *[0-9]+ +[0-9]+ +[a-z]/ { printf " %7.2f%s", $8, ($9 == 0 ? "" : "!") } END { print "" }'
    done
  done
fi
