#!/usr/bin/env bash
# Packs what the GPU checks need into .carry/ (ignored by git; copy it beside
# the tree on the GPU machine): the built libraries, plugins, tools and GPU
# tests, and the one run-time library such a machine may lack (libyaml).
# Run on the build machine after tools/dev/build.sh; takes seconds (longer
# the first time nvJitLink is compressed).
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .carry
mkdir -p .carry/lib .carry/bin .carry/deps
cp -a build/lib/libmkccl.so* build/lib/libnccl.so* .carry/lib/
cp -a build/lib/mkccl build/lib/mkccl-netcheck .carry/lib/
# Test-only plugins (the host suite's tuners and profilers) stay here: the
# GPU check loads none of them, and the carry is limited to 64 MiB.
rm -f .carry/lib/mkccl/libmkccl-test-*.so
for b in mkccl-info mkccl-run mkccl-exec mkccl-perf mkccl-perf-gpu mkccl-gpu-sendrecv-threads mkccl-netcheck mkccl-unpack-bench test_gpu_coll test_gpu_fault test_gpu_paths \
         test_gpu_api test_gpu_symm test_coll_public test_peer_watch test_peer_status; do
  cp -a "build/bin/$b" .carry/bin/
done
# The device API samples (tools/gpu/devapi.sh), where they were built (nvcc
# and NVIDIA's NCCL 2.28 headers at configure).
for b in devapi_allreduce_lsa devapi_alltoall_ll devapi_ring_gin; do
  if [[ -x build/bin/$b ]]; then cp -a "build/bin/$b" .carry/bin/; fi
done
# PACK_HOST_BENCH=1: also the host benchmarks and Open MPI's Debian
# packages, for bench/host_on_device.sh.
if [[ ${PACK_HOST_BENCH:-0} == 1 ]]; then
  for b in mkccl-mpi-allreduce mkccl-mpi-shm mkccl-netbench mkccl-proxy-bench mkccl-line-exchange mkccl-slot-stream mkccl-p2p-allreduce mkccl-tcp-exchange; do cp -a "build/bin/$b" .carry/bin/; done
  bench/ompi_carry.sh fetch .carry/ompi-debs
fi
# The GPU microbenchmark (bench/gpu_micro.cu, static cudart, ~1 MB), where nvcc is.
if [[ -x /usr/local/cuda/bin/nvcc ]]; then bench/gpu_micro_build.sh .carry/bin/mkccl-gpu-micro; fi
cp -aL /usr/lib/x86_64-linux-gnu/libyaml-0.so.2 .carry/deps/
# PACK_WHEEL=1: the Python wheel too, from an install of build/
# (tools/gpu/frameworks.sh with FRAMEWORKS_WHEEL=1 installs it with pip).
if [[ ${PACK_WHEEL:-0} == 1 ]]; then
  rm -rf build/wheel-prefix
  cmake --install build --prefix build/wheel-prefix > /dev/null
  python3 packaging/python/build_wheel.py --prefix build/wheel-prefix --out .carry \
    --version "$(sed -n 's/^project(mkccl VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)"
fi
# nvJitLink (UNPACK on GPUs links device code at init), in case that machine
# has none of CUDA 13: 99 MB, so compressed (kept in build/ between packs).
# PACK_NVJITLINK=0 leaves it out (multi_gpu.sh does not run UNPACK; the
# carry is limited to 64 MiB).
NVJL=/usr/local/cuda/lib64/libnvJitLink.so.13
if [[ ${PACK_NVJITLINK:-1} == 1 && -e $NVJL ]]; then
  [[ build/libnvJitLink.so.13.xz -nt $NVJL ]] || xz -T2 -6 -c "$NVJL" > build/libnvJitLink.so.13.xz
  cp build/libnvJitLink.so.13.xz .carry/deps/
fi
# NVIDIA's nccl-tests sources for one_gpu.sh section T: never in this
# repository; fetched to /tmp/nccl-tests-src (its SOURCES.txt says from
# which commit each file came). Only the files the build needs (~160 KB).
NT=${NCCL_TESTS_SRC:-/tmp/nccl-tests-src}
if [[ -e $NT/src/common.cu ]]; then
  mkdir -p .carry/nccl-tests-src/src .carry/nccl-tests-src/verifiable
  cp "$NT"/src/*.cu "$NT"/src/*.cc "$NT"/src/*.h .carry/nccl-tests-src/src/
  cp "$NT"/verifiable/verifiable.cu "$NT"/verifiable/verifiable.h .carry/nccl-tests-src/verifiable/
  [[ -e $NT/SOURCES.txt ]] && cp "$NT/SOURCES.txt" .carry/nccl-tests-src/
  echo "nccl-tests sources: $(du -sh .carry/nccl-tests-src | cut -f1) from $NT"
else
  echo "no nccl-tests sources at $NT: one_gpu.sh section T will fail" >&2
fi
du -sh .carry
