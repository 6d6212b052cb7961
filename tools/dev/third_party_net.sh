#!/usr/bin/env bash
# Runs the net plugin conformance kit (mkccl-netcheck) against net plugins
# that we did not write, built OUTSIDE this repository, and then mkccl itself
# over them. No third-party code is here: pass the paths of the shared objects
# you built (docs/CONFORMANCE-third-party.md says what was built from where).
#
# Usage: tools/dev/third_party_net.sh [--env VAR=VALUE]... [--ranks N] [--full] [--out DIR] PLUGIN.so...
#   For each plugin:
#   - the kit as mkccl loads it (newest ABI it exports), then once per
#     ncclNetPlugin_vN it exports that mkccl takes (v6..v12), with --abi N;
#   - a plugin that reports devices: the public collective test
#     (test_coll_public N [quick], host memory, NCCL_SHM_DISABLE=1,
#     NCCL_NET_PLUGIN=<path>), which must pass and must have taken that plugin;
#   - a plugin that reports no devices: the same test twice, to show the
#     loader: plain (it must move on to the next net plugin and pass) and with
#     NCCL_NET=<the plugin's name> (it must fail, saying no plugin of that name
#     could be loaded).
#   --env VAR=VALUE is exported for every run (e.g. FI_PROVIDER=tcp).
#   --full runs test_coll_public without "quick". Default ranks: 2.
# Uses build/ (mkccl-netcheck, test_coll_public). Exit 1 if anything above did
# not hold.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
ranks=2 quick=quick out="${TMPDIR:-/tmp}/mkccl-third-party-net"
envs=() plugins=()
while (($#)); do
  case "$1" in
    --env) envs+=("$2"); shift 2 ;;
    --ranks) ranks="$2"; shift 2 ;;
    --full) quick=""; shift ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "$0: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) plugins+=("$(realpath "$1")"); shift ;;
  esac
done
((${#plugins[@]})) || { echo "usage: $0 [--env VAR=VALUE]... [--ranks N] [--full] [--out DIR] PLUGIN.so..." >&2; exit 2; }
B=build/bin
rm -rf "$out" && mkdir -p "$out"
fail=0
dbg=(NCCL_DEBUG=INFO "NCCL_DEBUG_SUBSYS=INIT,NET")

plugin_lines() { # the loader's NET/Plugin outcome lines of a log, counted
  grep -h "NET/Plugin:" "$1" | sed 's/^.*NET\/Plugin: //' | sort | uniq -c | sed 's/^ *\([0-9]*\) /   (x\1) /'
}

for p in "${plugins[@]}"; do
  tag=$(basename "$p" .so)
  echo "== $p"
  [ -r "$p" ] || { echo "   not readable"; fail=1; continue; }
  abis=$(nm -D --defined-only "$p" 2>/dev/null | sed -n 's/.* ncclNetPlugin_v\([0-9]*\)$/\1/p' | sort -n | tr '\n' ' ')
  echo "   exports ncclNetPlugin_v: ${abis:-none}"

  # 1. The kit, as mkccl would load it, then at each exported ABI it takes.
  log="$out/$tag.netcheck.log"
  env "${envs[@]}" "${dbg[@]}" timeout 1800 "$B/mkccl-netcheck" "$p" >"$log" 2>&1
  rc=$?
  echo "   mkccl-netcheck: rc=$rc, $(grep -c '^PASS' "$log") PASS, $(grep -c '^FAIL' "$log") FAIL, $(grep -c '^WARN' "$log") WARN, $(grep -c '^SKIP' "$log") SKIP"
  plugin_lines "$log" | head -3
  grep -h '^FAIL\|^WARN\|^SKIP\|nothing tested' "$log" | sed 's/^/   /'
  nodev=0
  [ "$rc" = 77 ] && nodev=1 # nothing tested: no devices (the loader's fallback is run below)
  [ "$rc" = 0 ] || [ "$nodev" = 1 ] || fail=1
  for a in $abis; do
    if [ "$a" -lt 6 ] || [ "$a" -gt 12 ]; then continue; fi
    alog="$out/$tag.netcheck-abi$a.log"
    env "${envs[@]}" timeout 1800 "$B/mkccl-netcheck" "$p" --abi "$a" >"$alog" 2>&1
    arc=$?
    echo "   mkccl-netcheck --abi $a: rc=$arc, $(grep -c '^PASS' "$alog") PASS, $(grep -c '^FAIL' "$alog") FAIL, $(grep -c '^WARN' "$alog") WARN, $(grep -c '^SKIP' "$alog") SKIP"
    grep -h '^FAIL\|^WARN' "$alog" | sed 's/^/     /'
    [ "$arc" = 0 ] || { [ "$nodev" = 1 ] && [ "$arc" = 77 ]; } || fail=1
  done

  # 2. mkccl over it: the public collective test, host memory, net only.
  run_coll() { # name, extra env...
    local name="$1"; shift
    env "${envs[@]}" "${dbg[@]}" NCCL_SHM_DISABLE=1 NCCL_NET_PLUGIN="$p" "$@" \
      timeout 900 "$B/test_coll_public" "$ranks" $quick >"$out/$tag.$name.log" 2>&1
  }
  if [ "$nodev" = 0 ]; then
    run_coll coll
    rc=$?
    taken=$(grep -c "NET/Plugin: $p .*: taken" "$out/$tag.coll.log")
    echo "   test_coll_public $ranks $quick: rc=$rc, ranks that took it: $taken/$ranks"
    plugin_lines "$out/$tag.coll.log" | head -4
    { [ "$rc" = 0 ] && [ "$taken" = "$ranks" ]; } || { fail=1; tail -5 "$out/$tag.coll.log" | sed 's/^/   | /'; }
  else
    name=$(grep -ho "zero devices '[^']*'" "$log" | head -1 | cut -d"'" -f2)
    run_coll fallback
    rc=$?
    echo "   no devices; test_coll_public $ranks $quick: rc=$rc (must pass on the next net plugin)"
    plugin_lines "$out/$tag.fallback.log"
    [ "$rc" = 0 ] || fail=1
    run_coll named NCCL_NET="$name"
    rc=$?
    why=$(grep -ho "no net plugin named '[^']*' could be loaded" "$out/$tag.named.log" | head -1)
    echo "   NCCL_NET=$name: rc=$rc (must fail): ${why:-no such message}"
    { [ "$rc" != 0 ] && [ -n "$why" ]; } || fail=1
  fi
done
echo "logs: $out"
exit $fail
