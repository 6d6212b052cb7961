#!/usr/bin/env bash
# An older revision's host libraries next to the current ones in the carry,
# so one device call can run both builds side by side (a regression A/B):
#   tools/bench/pack_old_host.sh REV        (after tools/gpu/pack.sh)
# builds REV without CUDA and tests in a git worktree under /tmp and copies
# libmkccl, libnccl and its plugins (with their manifest, which the core finds
# next to itself) to .carry/lib-old. Then, on the device machine:
#   HOST_SWEEP='new= old=LD_LIBRARY_PATH=.carry/lib-old:.carry/deps' bash tools/bench/host_sweep.sh
# (the ranks start in the repository root, so the relative path holds; the
# benchmark binaries are the current ones, built against the public nccl.h).
set -euo pipefail
cd "$(dirname "$0")/../.."
REV=${1:?usage: $0 REV}
WT=/tmp/mkccl-old-$(git rev-parse --short "$REV")
[[ -d $WT ]] || git worktree add -q --detach "$WT" "$REV"
cmake -S "$WT" -B "$WT/build" -DMKCCL_ENABLE_CUDA=OFF -DMKCCL_BUILD_TESTS=OFF >/dev/null
cmake --build "$WT/build" -j"$(nproc)" >/dev/null
rm -rf .carry/lib-old
mkdir -p .carry/lib-old
cp -a "$WT"/build/lib/libmkccl.so* "$WT"/build/lib/libnccl.so* "$WT"/build/lib/mkccl .carry/lib-old/
rm -f .carry/lib-old/mkccl/libmkccl-test-*.so
echo "$REV ($(git rev-parse --short "$REV")) in .carry/lib-old: $(du -sh .carry/lib-old | cut -f1)"
