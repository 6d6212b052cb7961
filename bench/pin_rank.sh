#!/usr/bin/env bash
# Runs a rank of mkccl-run on its own share of the CPUs: rank r of n gets
# CPUs [r*k, (r+1)*k), k = CPUs / n (the threads of one rank still float
# within its share). A benchmark aid, to compare with the scheduler's own
# placement:  mkccl-run -n 4 -- bench/pin_rank.sh mkccl-perf ...
set -euo pipefail
n=${MKCCL_RUN_NRANKS:?run me under mkccl-run}
r=${MKCCL_RUN_RANK:?run me under mkccl-run}
cpus=$(nproc)
k=$((cpus / n))
((k >= 1)) || k=1
lo=$(((r * k) % cpus))
exec taskset -c "$lo-$((lo + k - 1))" "$@"
