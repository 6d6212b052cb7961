#!/usr/bin/env bash
# The host benchmarks of docs/PERFORMANCE.md (bench/host_vs_mpi.sh:
# mkccl over net-socket and SHM next to Open MPI's tcp and vader BTLs, the
# socket plugin against a TCP stream, the proxy's cost per step) on a
# machine of 16 or more cores, from .carry/, so every rank has a core of its
# own (on the 2-core VM ranks share them). Open MPI comes from .carry/ too.
# On the build machine:
#   tools/dev/build.sh && PACK_HOST_BENCH=1 PACK_NVJITLINK=0 tools/gpu/pack.sh
# then on the measuring machine, from the repository root with .carry/ beside the tree:
#   bash bench/host_on_device.sh 256M 20
# Arguments are host_vs_mpi.sh's; HOST_VS_MPI_PARTS picks parts as there.
# HOST_ON_DEVICE_SHM_REG=1 runs bench/host_shm_reg.sh instead (single copy
# over SHM: plain, registered and ncclMemAlloc'ed buffers, with Open MPI's
# single copy beside them; its HOST_SHM_REG_* variables apply).
# The log and its tables go to $OUT (bench.log, tables.md) and stdout.
set -uo pipefail
cd "$(dirname "$0")/.."
C=$PWD/.carry
OUT=${OUT:-/tmp/host-bench}
mkdir -p "$OUT"
[[ -d $C/ompi-debs ]] || { echo "host_on_device: no $C/ompi-debs (pack with PACK_HOST_BENCH=1)" >&2; exit 2; }
bench/ompi_carry.sh unpack "$C/ompi-debs" /tmp/ompi-root || exit 1
export LD_LIBRARY_PATH=$C/lib:$C/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "== $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
if [[ ${HOST_ON_DEVICE_SHM_REG:-0} == 1 ]]; then
  eval "$(bench/ompi_carry.sh env /tmp/ompi-root)"
  HOST_SHM_REG_MPIRUN=orterun bench/host_shm_reg.sh "$C" | tee "$OUT/shm_reg.txt"
  exit "${PIPESTATUS[0]}"
fi
HOST_VS_MPI_BIN=$C/bin HOST_VS_MPI_LIB=$C/lib HOST_VS_MPI_OMPI=/tmp/ompi-root \
  bench/host_vs_mpi.sh "$@" > "$OUT/bench.log" 2>&1
rc=$?
python3 bench/side_by_side.py "$OUT/bench.log" | tee "$OUT/tables.md"
echo "== host_vs_mpi.sh rc=$rc; log: $OUT/bench.log"
grep -iE "error|failed|not found" "$OUT/bench.log" | head -5
exit $rc
