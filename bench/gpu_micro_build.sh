#!/usr/bin/env bash
# Builds the GPU microbenchmark (gpu_micro.cu) for H100s (sm_90), static
# CUDA runtime, so the GPU machine needs no LD_LIBRARY_PATH for it.
# Usage: bench/gpu_micro_build.sh [OUT]   (default: build/bin/mkccl-gpu-micro
#   in the repository; a given OUT is relative to the current directory)
# Env: NVCC (default /usr/local/cuda/bin/nvcc).
set -euo pipefail
OUT=${1:-}
[[ -z $OUT || $OUT == /* ]] || OUT=$PWD/$OUT
cd "$(dirname "$0")/.."
R=$PWD
OUT=${OUT:-$R/build/bin/mkccl-gpu-micro}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
mkdir -p "$(dirname "$OUT")"
"$NVCC" -std=c++17 -O3 -gencode arch=compute_90,code=sm_90 -I"$R" -I"$R/kernel-core" -I"$R/abi" -I"$R/include" \
  -o "$OUT" bench/gpu_micro.cu -lcuda
echo "built $OUT"
