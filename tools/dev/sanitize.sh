#!/usr/bin/env bash
# The test suite under sanitizers, host path (GPU parts off); CI runs both
# (tools/dev/test.sh):
#   build-asan: AddressSanitizer + UndefinedBehaviorSanitizer (leaks too)
#   build-tsan: ThreadSanitizer
# Any report fails the run: no recovery, the first report stops the process
# (forked ranks too), and a stopped rank fails its test.
# Usage: tools/dev/sanitize.sh [asan|tsan|all] [ctest args...]
# SANITIZE_JOBS: parallel tests (default 2 per core: the tests are mostly
# processes waiting on each other).
set -euo pipefail
cd "$(dirname "$0")/../.."
which="${1:-all}"
(($#)) && shift
tools/dev/deps.sh
jobs="$(nproc)"
test_jobs="${SANITIZE_JOBS:-$((2 * jobs))}"

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# No suppression file: third-party leaks (libfabric's providers, hwloc's
# PCI plugin through libpciaccess) are in libraries unloaded before the leak
# check, so LeakSanitizer cannot name them (<unknown module>); the few tests
# that load them turn leak detection off themselves, with the reason next to
# it (tests/conformance/net/CMakeLists.txt, tests/kernel-core/CMakeLists.txt).
# die_after_fork=0: a rank forked from a process whose only other thread is
# TSan's own goes on (tests never fork beside a thread of ours: ranks_share).
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0:die_after_fork=0"

# Left out under both sanitizers, with why:
#   test_fifo_conn_fifo_model  runs spin's verifier of the Promela model, a
#                              program spin generates: none of our C runs
#                              (the plain CI run checks the model).
#   test_plan_rooted_*_{2,5,8} Broadcast/Reduce trees against rings for
#                              every root x type x op: the cost grows with the
#                              ranks squared (175 s of the plain suite's CPU
#                              for 2..8 ranks). 3 and 4 ranks (odd and even
#                              trees, shifted or mirrored) over shm and the
#                              net run; 2 is a chain, 5 and 8 repeat shapes.
skip="test_fifo_conn_fifo_model|test_plan_rooted_(shm|net)_[258]\$"
# Tests whose checks bound the library's time to fail (kill, abort, destroy,
# injected errors: MKCCL_TIMEOUT + 4 s of slack) run after the others, one
# at a time, so a loaded machine and the sanitizer's slowdown do not stretch
# the time they measure (under TSan at -j4 a survivor took 15 s on 2 cores).
timed="test_fault_|test_net_faulty_errors|test_peer_watch_"

sanitized() { # name, -fsanitize list, extra C flags, ctest args...
  local name="$1" list="$2" cflags="$3" t0 t1 t2
  shift 3
  t0=$SECONDS
  # The build's output goes to a log, shown when it fails.
  mkdir -p "build-$name"
  if ! { cmake -S . -B "build-$name" -DMKCCL_WERROR=ON -DMKCCL_ENABLE_CUDA=OFF -DMKCCL_SANITIZE="$list" \
           -DMKCCL_REQUIRE_TEST_DEPS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="-fno-sanitize-recover=all $cflags" &&
         cmake --build "build-$name" -j"$jobs"; } >"build-$name/build.log" 2>&1; then
    tail -n 60 "build-$name/build.log"
    echo "sanitize $name: build failed (build-$name/build.log)" >&2
    return 1
  fi
  t1=$SECONDS
  echo "sanitize $name: left out on purpose (see the top of sanitize.sh): $(ctest --test-dir "build-$name" -N -R "$skip" |
    sed -n 's/^ *Test *#[0-9]*: //p' | tr '\n' ' ')"
  ctest --test-dir "build-$name" --output-on-failure -j"$test_jobs" --timeout 900 -E "$skip|$timed" "$@"
  ctest --test-dir "build-$name" --output-on-failure -j1 --timeout 900 -R "$timed" -E "$skip" "$@"
  t2=$SECONDS
  echo "sanitize $name: build $((t1 - t0)) s, tests $((t2 - t1)) s"
}

# TSan: gcc warns that it does not model atomic_thread_fence; only the GPU
# executor (not built here, but compiled without kernels) uses one.
# MKCCL_TEST_QUICK: test_coll_public runs its big counts on float32 only,
# test_plan_rooted its large case at a tenth.
# TSan instruments every element of a reduction; the big counts add that
# arithmetic, not new hand-offs between threads: every collective, type and
# op still runs (counts 0, 1, 7 and 100003) through the same FIFOs and proxy.
case "$which" in
  asan) sanitized asan address,undefined "" "$@" ;;
  tsan) MKCCL_TEST_QUICK=1 sanitized tsan thread "-Wno-tsan" "$@" ;;
  all)
    sanitized asan address,undefined "" "$@"
    MKCCL_TEST_QUICK=1 sanitized tsan thread "-Wno-tsan" "$@"
    ;;
  *) echo "usage: $0 [asan|tsan|all] [ctest args...]" >&2; exit 2 ;;
esac
