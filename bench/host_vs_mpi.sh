#!/usr/bin/env bash
# Host benchmarks for docs/PERFORMANCE.md, every number of one table from the
# same run on the same machine: mkccl-perf all_reduce over the socket net
# plugin (shared memory off) and over SHM, next to Open MPI's MPI_Allreduce
# over its tcp BTL and its shared-memory BTL (vader), for 2 and 4 ranks;
# then the socket plugin against a plain TCP stream, and the proxy's own
# cost per step with a null net plugin. Benchmarks print; they assert nothing.
#
#   bench/host_vs_mpi.sh [maxBytes] [iters]     (defaults 256M 20)
#   HOST_VS_MPI_PARTS="net shm p2p" (default) picks parts: on the 2-core VM a
#   large tcp run leaves memory copies slow for a minute or two, so the SHM
#   tables are best taken in a run of their own (PARTS=shm).
#   HOST_VS_MPI_BIN / HOST_VS_MPI_LIB: where the programs and libmkccl are
#   (default build/bin, build/lib); HOST_VS_MPI_OMPI: an Open MPI unpacked
#   from Debian's packages (bench/ompi_carry.sh), used instead of the
#   installed one, on a machine without a package registry
#   (bench/host_on_device.sh sets these from .carry/).
set -euo pipefail
PARTS=${HOST_VS_MPI_PARTS:-net shm p2p}
has() { [[ " $PARTS " == *" $1 "* ]]; }
cd "$(dirname "$0")/.."
MAX=${1:-256M}
ITERS=${2:-20}
B=${HOST_VS_MPI_BIN:-build/bin}
L=${HOST_VS_MPI_LIB:-build/lib}
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
if [[ -n ${HOST_VS_MPI_OMPI:-} ]]; then
  eval "$(bench/ompi_carry.sh env "$HOST_VS_MPI_OMPI")"
  MPIRUN=(orterun --allow-run-as-root --oversubscribe --bind-to none)
fi

echo "# $(date -u +%FT%TZ) $(uname -n) $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "# mkccl $(git rev-parse --short HEAD 2>/dev/null || echo unknown); $("${MPIRUN[0]}" --version 2>/dev/null | head -1)"
for n in 2 4; do
  echo
  echo "## $n ranks, all_reduce float sum, 1K..$MAX"
  if has net; then
  echo "### mkccl over net-socket (NCCL_SHM_DISABLE=1)"
  $B/mkccl-run -n "$n" -x NCCL_SHM_DISABLE=1 -- $B/mkccl-perf all_reduce -b 1K -e "$MAX" -f 4 -n "$ITERS" -w 3
  echo "### Open MPI, btl tcp,self"
  "${MPIRUN[@]}" -np "$n" --mca btl tcp,self --mca btl_tcp_if_include lo $B/mkccl-mpi-allreduce -b 1K -e "$MAX" -f 4 -n "$ITERS" -w 3
  fi
  has shm || continue
  echo "### mkccl over transport-shm"
  $B/mkccl-run -n "$n" -- $B/mkccl-perf all_reduce -b 1K -e "$MAX" -f 4 -n "$ITERS" -w 3
  echo "### Open MPI, btl vader,self"
  "${MPIRUN[@]}" -np "$n" --mca btl vader,self $B/mkccl-mpi-allreduce -b 1K -e "$MAX" -f 4 -n "$ITERS" -w 3
  echo "### small-message latency, 8 B: mkccl SHM, then Open MPI vader"
  $B/mkccl-run -n "$n" -- $B/mkccl-perf all_reduce -b 8 -e 8 -n 1000 -w 100
  "${MPIRUN[@]}" -np "$n" --mca btl vader,self $B/mkccl-mpi-allreduce -b 8 -e 8 -n 1000 -w 100
done
has p2p || exit 0
echo
echo "## net-socket point to point vs a plain loopback TCP stream"
$B/mkccl-netbench -p $L/mkccl/libmkccl-net-socket.so -b 64K -e "$MAX" -f 4 -r 3
echo
echo "## the proxy's cost per step (transport-net, null net plugin)"
$B/mkccl-proxy-bench $L/mkccl/libmkccl-transport-net.so 1000000
