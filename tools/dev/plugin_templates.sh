#!/usr/bin/env bash
# Checks the plugin templates of examples/plugins/ against an installed mkccl.
#
# Usage: tools/dev/plugin_templates.sh PREFIX
#   PREFIX: an mkccl install (cmake --install BUILD --prefix PREFIX).
#
# In a temporary folder outside the source tree, each template (net, tuner,
# profiler) is copied and built twice: with CMake (find_package(mkccl),
# -DCMAKE_PREFIX_PATH=PREFIX) and with make (pkg-config mkccl-plugin,
# PKG_CONFIG_PATH=PREFIX/lib/pkgconfig), warnings as errors. Each library must
# export exactly its ABI symbols and link neither libnccl nor libmkccl. Then:
# - PREFIX/bin/mkccl-netcheck on the net template (the CMake build in full at
#   its newest ABI, the make build --quick at ABI 11) must say conformant;
# - a 2-rank host AllReduce (PREFIX/bin/mkccl-run -n 2 -- PREFIX/bin/mkccl-perf
#   all_reduce -c 1) with the three templates loaded (NCCL_NET_PLUGIN,
#   NCCL_TUNER_PLUGIN, NCCL_PROFILER_PLUGIN) and NCCL_SHM_DISABLE=1 must be
#   right (no wrong element), every channel must go over the net template,
#   the tuner's choices (Tree/Simple below 64 KiB, Ring/Simple above) must be
#   what mkccl ran, and the profiler's summary must count those collectives.
# Exit 0 when every step passed; else 1, naming the failed step and its log.
# KEEP=1 keeps the temporary folder; JOBS sets build parallelism (2).
set -euo pipefail

usage() { echo "usage: $0 PREFIX" >&2; exit 2; }
[ $# -eq 1 ] || usage
[ -d "$1" ] || { echo "$0: $1: no such folder" >&2; exit 2; }
PREFIX="$(cd "$1" && pwd)"
SRC="$(cd "$(dirname "$0")/../../examples/plugins" && pwd)"
JOBS="${JOBS:-2}"
TEMPLATES=(net tuner profiler)

WORK="$(mktemp -d "${TMPDIR:-/tmp}/mkccl-plugin-templates.XXXXXX")"
cleanup() { if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi; }
trap cleanup EXIT
mkdir -p "$WORK/logs"
nstep=0

fail() { # step, log, message
  echo "FAILED: $1: $3" >&2
  if [ -n "$2" ] && [ -f "$2" ]; then
    echo "---- last lines of $2" >&2
    tail -n 25 "$2" >&2
  fi
  exit 1
}

step() { # name, command...: runs it with its output in a log of its own
  local name="$1" log
  shift
  nstep=$((nstep + 1))
  log="$WORK/logs/$(printf '%02d' "$nstep")-${name//[^A-Za-z0-9_.-]/_}.log"
  if ! "$@" >"$log" 2>&1; then
    KEEP=1
    fail "$name" "$log" "command failed: $*"
  fi
  echo "ok: $name"
}

# ---- what the prefix must hold ----
for f in lib/cmake/mkccl/mkcclConfig.cmake lib/pkgconfig/mkccl-plugin.pc lib/libnccl.so.2 \
  include/nccl.h include/mkccl/abi/net/nccl_net.h bin/mkccl-netcheck bin/mkccl-run bin/mkccl-perf; do
  [ -e "$PREFIX/$f" ] || fail "prefix" "" "$PREFIX/$f is missing (not an mkccl install?)"
done
for tool in cmake make pkg-config nm readelf; do
  command -v "$tool" >/dev/null || fail "tools" "" "$tool is not installed"
done
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
# The prefix's libnccl.so.2 / libmkccl.so, whatever else the system has.
export LD_LIBRARY_PATH="$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# ---- build each template both ways, from copies outside the source tree ----
declare -A LIB=([net]=libnet-example.so [tuner]=libtuner-example.so [profiler]=libprofiler-example.so)
declare -A SYMS=([net]="mkcclPluginInfo_v1 ncclNetPlugin_v11 ncclNetPlugin_v12"
  [tuner]="mkcclPluginInfo_v1 ncclTunerPlugin_v5 ncclTunerPlugin_v6"
  [profiler]="mkcclPluginInfo_v1 ncclProfiler_v5 ncclProfiler_v6")

check_lib() { # template, library: its exported symbols and what it links
  local t="$1" so="$2" got
  [ -f "$so" ] || { echo "$so was not built"; return 1; }
  got="$(nm -D --defined-only "$so" | awk 'NF == 3 { print $3 }' | sort | tr '\n' ' ')"
  echo "exported: $got"
  [ "$got" = "${SYMS[$t]} " ] || { echo "expected exactly: ${SYMS[$t]}"; return 1; }
  if readelf -d "$so" | grep -E 'NEEDED.*(libnccl|libmkccl)'; then
    echo "a plugin must not link the core"
    return 1
  fi
}

for t in "${TEMPLATES[@]}"; do
  cp -r "$SRC/$t" "$WORK/cmake-src-$t"
  cp -r "$SRC/$t" "$WORK/make-$t"
  step "$t: cmake configure" cmake -S "$WORK/cmake-src-$t" -B "$WORK/cmake-$t" -DCMAKE_PREFIX_PATH="$PREFIX" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS=-Werror
  step "$t: cmake build" cmake --build "$WORK/cmake-$t" -j "$JOBS"
  step "$t: cmake library" check_lib "$t" "$WORK/cmake-$t/${LIB[$t]}"
  step "$t: make build" make -C "$WORK/make-$t" -j "$JOBS" CFLAGS="-O2 -g -Werror"
  step "$t: make library" check_lib "$t" "$WORK/make-$t/${LIB[$t]}"
done
NET="$WORK/cmake-net/${LIB[net]}"
TUNER="$WORK/cmake-tuner/${LIB[tuner]}"
PROFILER="$WORK/make-profiler/${LIB[profiler]}"

# ---- the net template through the conformance kit ----
netcheck() { # library, options...
  local so="$1" out
  shift
  out="$("$PREFIX/bin/mkccl-netcheck" "$so" "$@" 2>&1)" || { echo "$out"; return 1; }
  echo "$out"
  grep -q ": conformant$" <<<"$out"
}
step "net: mkccl-netcheck (CMake build, full)" netcheck "$NET"
grep -h "passed, .* failed" "$WORK"/logs/*netcheck*full*.log | sed 's/^/    /'
step "net: mkccl-netcheck --quick --abi 11 (make build)" netcheck "$WORK/make-net/${LIB[net]}" --quick --abi 11

# ---- a 2-rank AllReduce with the three templates loaded ----
RUN_LOG="$WORK/logs/allreduce.log"
PROFILE="$WORK/profile.txt"
allreduce() {
  env NCCL_NET_PLUGIN="$NET" NCCL_TUNER_PLUGIN="$TUNER" NCCL_PROFILER_PLUGIN="$PROFILER" \
    PROFILER_EXAMPLE_FILE="$PROFILE" NCCL_SHM_DISABLE=1 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING \
    timeout 300 "$PREFIX/bin/mkccl-run" -n 2 -- "$PREFIX/bin/mkccl-perf" all_reduce -b 8 -e 2M -f 8 -n 5 -w 2 -c 1 \
    >"$RUN_LOG" 2>&1
}
nstep=$((nstep + 1))
allreduce || { KEEP=1; fail "2-rank AllReduce" "$RUN_LOG" "mkccl-run exited $?"; }
echo "ok: 2-rank AllReduce ran"

expect() { # step, count wanted ("+" for one or more), extended regex, file
  local name="$1" want="$2" re="$3" file="$4" n
  nstep=$((nstep + 1))
  n="$(grep -cE -- "$re" "$file" || true)"
  if { [ "$want" = "+" ] && [ "$n" -lt 1 ]; } || { [ "$want" != "+" ] && [ "$n" != "$want" ]; }; then
    KEEP=1
    fail "$name" "$file" "wanted ${want/+/one or more} line(s) matching '$re', found $n"
  fi
  echo "ok: $name"
  grep -m 2 -E -- "$re" "$file" | sed 's/^/    /'
}

expect "results right (mkccl-perf -c 1)" 1 "^# Out of bounds values : 0 OK" "$RUN_LOG"
nstep=$((nstep + 1))
bad="$(awk '/^ *[0-9]/ && ($9 != 0 || $13 != 0)' "$RUN_LOG")"
[ -z "$bad" ] || { KEEP=1; fail "no wrong element" "$RUN_LOG" "rows with #wrong != 0: $bad"; }
echo "ok: no row with a wrong element"
expect "net: both ranks use net-example" 2 "Rank [01]: using net plugin net-example " "$RUN_LOG"
expect "net: channels go over the net" + " via net$" "$RUN_LOG"
nstep=$((nstep + 1))
other="$(grep -E "Channel [0-9]+/[0-9]+ : .* via " "$RUN_LOG" | grep -v " via net$" || true)"
[ -z "$other" ] || { KEEP=1; fail "net: no other transport" "$RUN_LOG" "channels not over the net: $other"; }
echo "ok: net: no channel over another transport"
expect "tuner: both ranks use tuner-example" 2 "TUNER/Plugin: using 'tuner-example'" "$RUN_LOG"
expect "tuner: small AllReduce chosen Tree/Simple" 2 "TUNER/tuner-example: AllReduce [0-9]+ bytes: Tree/Simple" "$RUN_LOG"
expect "tuner: large AllReduce chosen Ring/Simple" 2 "TUNER/tuner-example: AllReduce [0-9]+ bytes: Ring/Simple" "$RUN_LOG"
expect "tuner: mkccl ran tree for 8 bytes" + "allreduce: 8 Bytes -> Algo tree proto simple" "$RUN_LOG"
expect "tuner: mkccl ran ring for 2 MiB" + "allreduce: 2097152 Bytes -> Algo ring proto simple" "$RUN_LOG"
expect "profiler: both ranks use profiler-example" 2 "PROFILER/Plugin: using 'profiler-example'" "$RUN_LOG"
[ -f "$PROFILE" ] || { KEEP=1; fail "profiler: summary" "$RUN_LOG" "$PROFILE was not written"; }
expect "profiler: a summary per rank, collectives counted" 2 "^profiler-example: rank [01] of 2 .*: [1-9][0-9]* collectives$" "$PROFILE"
expect "profiler: Tree/Simple AllReduce counted" 2 "^profiler-example: +AllReduce +Tree/Simple: [1-9][0-9]* calls" "$PROFILE"
expect "profiler: Ring/Simple AllReduce counted" 2 "^profiler-example: +AllReduce +Ring/Simple: [1-9][0-9]* calls" "$PROFILE"

echo "plugin templates: all $nstep steps passed against $PREFIX"
