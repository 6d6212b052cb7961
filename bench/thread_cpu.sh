#!/usr/bin/env bash
# CPU use per thread name while a command runs: which threads of mkccl's
# ranks (mkccl-proxy, mkccl-chN, mkccl-sock[sr]N, the calling thread under
# the program's name) burn the cores, and how much is system time.
#   bench/thread_cpu.sh WARMUP_S SAMPLE_S -- COMMAND...
# Starts COMMAND, waits WARMUP_S, reads /proc/PID/task/*/stat of COMMAND's
# processes and their descendants, again after SAMPLE_S, and prints per
# thread name (trailing digits as N) the threads, their summed CPU % (100 =
# one core) and its system part. Benchmarks print; this asserts nothing.
set -uo pipefail
WARM=${1:?usage: $0 WARMUP_S SAMPLE_S -- COMMAND...}
SAMPLE=${2:?}
shift 2
[[ ${1:-} == -- ]] && shift
# The command's processes: LEADER and its descendants.
tree() {
  ps -e -o pid=,ppid= | awk -v root="$LEADER" '{ parent[$1] = $2 } END {
      for (p in parent) { q = p; while (q != "" && q != root && q > 1) q = parent[q]; if (q == root) print p } }'
}
snap() { # tid name utime stime, for every thread of the command's processes
  local p t line rest name f
  for p in $(tree); do
    for t in /proc/"$p"/task/[0-9]*; do
      read -r line 2>/dev/null <"$t/stat" || continue
      rest=${line##*) }
      name=${line#*(}
      name=${name%%)*}
      read -ra f <<<"$rest"
      echo "${t##*/} $name ${f[11]} ${f[12]}" # stat fields 14, 15: utime, stime
    done
  done
}
"$@" &
LEADER=$!
sleep "$WARM"
a=$(snap)
sleep "$SAMPLE"
b=$(snap)
wait "$LEADER"
rc=$?
hz=$(getconf CLK_TCK)
printf "%-16s %7s %8s %8s\n" thread threads "cpu %" "sys %"
join <(sort <<<"$a") <(sort <<<"$b") | awk -v hz="$hz" -v s="$SAMPLE" '
  { u = $6 - $3; k = $7 - $4; name = $2; sub(/[0-9]+$/, "N", name)
    n[name]++; cpu[name] += (u + k) / hz / s * 100; sys[name] += k / hz / s * 100 }
  END { for (x in n) printf "%-16s %7d %8.0f %8.0f\n", x, n[x], cpu[x], sys[x] }' | sort -k3 -nr
exit $rc
