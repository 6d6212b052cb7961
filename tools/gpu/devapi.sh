#!/usr/bin/env bash
# The device API check: the samples of examples/device-api (kernels built
# with nvcc against NVIDIA's NCCL 2.28 headers: an AllReduce over LSA loads
# and stores between LSA barriers, an AllToAll over LL A2A, a ring of GIN
# puts with signals and a GIN barrier through mkccl's proxy), in well under
# the budget (ONE_GPU_BUDGET_S, default 520 s). On the build machine:
#   tools/dev/build.sh && PACK_NVJITLINK=0 tools/gpu/pack.sh
# then on the GPU machine, from the repository root with .carry/ beside the tree:
#   bash tools/gpu/devapi.sh
# Each sample runs on mkccl with 1, 2 and 4 ranks as processes
# (MKCCL_ALLOW_SAME_GPU=1: all on one GPU when there is one), and with 1
# rank on NVIDIA's NCCL from the torch package where it has the device API
# (NCCL refuses two ranks on one GPU). The GIN ring runs on mkccl with 1,
# 2 and 4 ranks and on NVIDIA's with 1, where it either runs or refuses
# GIN for want of a GIN-capable NIC (its case passes on either, with the
# refusal's words in the table, and fails on anything else); on mkccl
# with 2 and 4 ranks also once as one host
# and once with a host per rank (DEVAPI_HOSTID_PER_RANK=1: each rank its
# own NCCL_HOSTID, so its own LSA team, every peer over GIN and the net
# plugin); every run must say which
# libnccl.so.2 served it. Prints PASS/FAIL per case, a table of both, and
# the verdict; logs go to $OUT/logs.tgz (default /tmp/out).
set -uo pipefail
cd "$(dirname "$0")/../.."
source tools/gpu/gpu_lib.sh
export NCCL_NVLS_ENABLE=0

SAMPLES=(allreduce_lsa alltoall_ll)
for s in "${SAMPLES[@]}" ring_gin; do
  if [[ ! -x $C/bin/devapi_$s ]]; then
    echo "no $C/bin/devapi_$s: build where nvcc and NCCL 2.28's nccl_device.h are, then tools/gpu/pack.sh" >&2
    fail=1
  fi
done

# NVIDIA's side only where its library has the device API (2.28 or later).
NC_LIB=${NCCL_DIR:+$NCCL_DIR/lib/libnccl.so.2}
# (The symbol list read whole: grep -q closing the pipe would fail nm under pipefail.)
NC_SYMS=$([[ -n $NC_LIB && -e $NC_LIB ]] && nm -D --defined-only "$NC_LIB" 2>/dev/null)
if grep -q " ncclDevCommCreate$" <<<"$NC_SYMS"; then
  HAVE_NC=1
else
  HAVE_NC=0
  echo "== NVIDIA's NCCL: none with the device API at '${NC_LIB:-<no nvidia.nccl>}': its column stays empty"
fi

echo "== device API samples on mkccl (MKCCL_ALLOW_SAME_GPU=1) and on NVIDIA's NCCL"
for s in "${SAMPLES[@]}"; do
  [[ -x $C/bin/devapi_$s ]] || continue
  for n in 1 2 4; do
    t "${s}_mkccl_$n" 120 LD_LIBRARY_PATH=$MK_LD MKCCL_ALLOW_SAME_GPU=1 -- "$C/bin/devapi_$s" "$n"
    need "${s}_mkccl_$n" "library: $C/lib/libnccl.so.2"
  done
  if ((HAVE_NC)); then
    t "${s}_nccl_1" 120 LD_LIBRARY_PATH=$NC_LD -- "$C/bin/devapi_$s" 1
    need "${s}_nccl_1" "library: $NCCL_DIR/lib/libnccl.so.2"
  fi
done

if [[ -x $C/bin/devapi_ring_gin ]]; then
  t ring_gin_mkccl_1 90 LD_LIBRARY_PATH=$MK_LD MKCCL_ALLOW_SAME_GPU=1 -- "$C/bin/devapi_ring_gin" 1
  need ring_gin_mkccl_1 "GIN context(s) of type 2"
  if ((HAVE_NC)); then
    t ring_gin_nccl_1 90 LD_LIBRARY_PATH=$NC_LD -- "$C/bin/devapi_ring_gin" 1
    need ring_gin_nccl_1 "library: $NCCL_DIR/lib/libnccl.so.2"
    NC_GIN=${GPU_CASE[ring_gin_nccl_1]:--}
    if [[ $NC_GIN == fail ]] && grep -qi "GIN.*not supported\|not supported.*GIN" "$OUT/ring_gin_nccl_1.log"; then
      NC_GIN="refused: $(grep -oi "[^:]*GIN[^.]*not supported[^.]*" "$OUT/ring_gin_nccl_1.log" | head -1)"
      gpu_case ring_gin_nccl_1 pass "PASS ring_gin_nccl_1 (NVIDIA's NCCL refuses GIN here, as documented)"
    fi
  fi
  for n in 2 4; do
    t "ring_gin_mkccl_$n" 90 LD_LIBRARY_PATH=$MK_LD MKCCL_ALLOW_SAME_GPU=1 -- "$C/bin/devapi_ring_gin" "$n"
    need "ring_gin_mkccl_$n" "library: $C/lib/libnccl.so.2"
    need "ring_gin_mkccl_$n" "GIN context(s) of type 2"
    t "ring_gin_hosts_$n" 90 LD_LIBRARY_PATH=$MK_LD MKCCL_ALLOW_SAME_GPU=1 DEVAPI_HOSTID_PER_RANK=1 \
      -- "$C/bin/devapi_ring_gin" "$n"
    need "ring_gin_hosts_$n" "LSA team of 1"
  done
fi

# Side by side: each case's verdict and the library that ran it.
echo "== side by side"
printf "  %-14s %-6s %-8s %s\n" sample ranks mkccl "NVIDIA NCCL"
for s in "${SAMPLES[@]}"; do
  for n in 1 2 4; do
    nc="-"
    [[ $n == 1 ]] && nc=${GPU_CASE[${s}_nccl_1]:--}
    printf "  %-14s %-6s %-8s %s\n" "$s" "$n" "${GPU_CASE[${s}_mkccl_$n]:--}" "$nc"
  done
done
printf "  %-14s %-6s %-8s %s\n" ring_gin 1 "${GPU_CASE[ring_gin_mkccl_1]:--}" "${NC_GIN:--}"
for n in 2 4; do
  printf "  %-14s %-6s %-8s %s\n" ring_gin "$n" "${GPU_CASE[ring_gin_mkccl_$n]:--}" "-"
  printf "  %-14s %-6s %-8s %s\n" ring_gin/hosts "$n" "${GPU_CASE[ring_gin_hosts_$n]:--}" "-"
done
grep -h "^library:" "$OUT"/*_nccl_1.log "$OUT"/*_mkccl_1.log 2>/dev/null | sort -u | sed 's/^/  /'
gpu_done
exit $?
