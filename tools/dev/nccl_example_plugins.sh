#!/usr/bin/env bash
# Runs NCCL's own example tuner and/or profiler (ext-tuner/example,
# ext-profiler/example), built OUTSIDE this repository, inside mkccl on host
# collectives, and says what happened. No NVIDIA code is here: pass the paths
# of the shared objects you built (docs/perf/tuneprof.md, "NCCL's example
# tuner and profiler inside mkccl", says how they were built).
#
# Usage: tools/dev/nccl_example_plugins.sh [--tuner T.so] [--profiler P.so] [--ranks N] [--out DIR]
#   --tuner:    AllReduce runs three times (no tuner, config "tree up to 64 KiB,
#               ring above", config "ring everywhere"); prints the algorithms
#               mkccl ran per size and whether mkccl-perf -c 1 found wrong data.
#   --profiler: one AllReduce sweep over SHM and one over NET (net-socket);
#               prints the example's dump files and their event counts.
# Uses build/ (mkccl-run, mkccl-perf). Exit 1 if a run fails or data is wrong.
set -uo pipefail
cd "$(dirname "$0")/../.."
tuner="" profiler="" ranks=4 out="${TMPDIR:-/tmp}/mkccl-nccl-example"
while (($#)); do
  case "$1" in
    --tuner) tuner="$(realpath "$2")"; shift 2 ;;
    --profiler) profiler="$(realpath "$2")"; shift 2 ;;
    --ranks) ranks="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "usage: $0 [--tuner T.so] [--profiler P.so] [--ranks N] [--out DIR]" >&2; exit 2 ;;
  esac
done
[ -n "$tuner$profiler" ] || { echo "$0: give --tuner and/or --profiler" >&2; exit 2; }
B=build/bin
rm -rf "$out" && mkdir -p "$out"
fail=0

run() { # name, env..., then -- and the mkccl-perf arguments
  local name="$1"; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" timeout 300 "$B/mkccl-run" -n "$ranks" -- "$B/mkccl-perf" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  local wrong
  wrong=$(awk '/^ *[0-9]/ && ($9 != 0 || $13 != 0)' "$out/$name.log" | wc -l)
  echo "== $name: rc=$rc, rows with #wrong != 0: $wrong"
  if [ "$rc" != 0 ] || [ "$wrong" != 0 ]; then fail=1; tail -5 "$out/$name.log"; fi
}

algos() { # per size: the algorithm/protocol mkccl's planner logged (all ranks, all iterations)
  grep -o "allreduce: [0-9]* Bytes -> Algo [a-z_]* proto [a-z0-9]*" "$out/$1.log" | sort | uniq -c |
    sort -k3,3n | sed 's/^/   /'
}

if [ -n "$tuner" ]; then
  printf 'allreduce,0,65536,tree,simple,-1,-1,-1\nallreduce,65537,4294967295,ring,simple,-1,-1,-1\n' >"$out/tree.conf"
  printf 'allreduce,0,4294967295,ring,simple,-1,-1,-1\n' >"$out/ring.conf"
  dbg=(NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING)
  run tuner_none "${dbg[@]}" -- all_reduce -b 8 -e 256K -f 8 -c 1 -n 5 -w 1
  algos tuner_none
  for c in tree ring; do
    run "tuner_$c" "${dbg[@]}" NCCL_TUNER_PLUGIN="$tuner" NCCL_TUNER_CONFIG_FILE="$out/$c.conf" -- \
      all_reduce -b 8 -e 256K -f 8 -c 1 -n 5 -w 1
    grep -h "TUNER/Plugin: using\|TUNER/ExamplePlugin: Loaded [0-9]" "$out/tuner_$c.log" | sed 's/^[^ ]* [^ ]* /   /' | sort -u
    algos "tuner_$c"
  done
fi

if [ -n "$profiler" ]; then
  # The example's pools are sized for GPUs: with its default pool of 256
  # collectives its init asks calloc for ~190 GB and fails (mkccl then runs
  # unprofiled and says so); 8 keeps it to a few GB of untouched pages.
  penv=(NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT NCCL_PROFILER_PLUGIN="$profiler" NCCL_PROFILE_EVENT_MASK=4095
        NCCL_PROFILE_COLL_POOL_SIZE=8 NCCL_PROFILE_P2P_POOL_SIZE=8)
  for tr in shm net; do
    t=(); [ "$tr" = net ] && t=(NCCL_SHM_DISABLE=1)
    run "profiler_$tr" "${penv[@]}" "${t[@]}" NCCL_PROFILE_DUMP_FILE="$out/prof_$tr" -- \
      all_reduce -b 8 -e 2M -f 16 -c 1 -n 5 -w 1
    grep -h "PROFILER/Plugin: using\|PROFILER/Plugin: init\|init failed" "$out/profiler_$tr.log" | sed 's/^[^ ]* [^ ]* /   /' | sort -u
    n=0
    for f in "$out"/prof_"$tr"_*.json; do
      [ -e "$f" ] || continue
      n=$((n + 1))
      echo "   $(basename "$f"): $(grep -c '"ph": "b"' "$f") events begun:" \
        "$(grep -o '"cat": "[A-Z_]*", "ph": "b"' "$f" | cut -d'"' -f4 | sort | uniq -c | tr -s ' \n' ' ')"
    done
    [ "$n" = "$ranks" ] || { echo "   expected $ranks dump files, found $n"; fail=1; }
  done
fi
echo "logs and dumps: $out"
exit $fail
