#!/usr/bin/env bash
# Runs a rank of mkccl-run with its named threads each on a CPU of its own,
# cores taken whole: rank r of n gets the CPUs of cores [r*k, (r+1)*k),
# k = cores / n, listed core by core (a core's hardware threads side by
# side). PIN_ORDER (default "exec,sockr,socks,proxy"; "," or ":" between
# names) says which thread takes the first, second, ... of those CPUs:
# exec is the caller's thread (channel 0), sockr/socks the first receiving and
# sending helper, proxy the proxy thread. Without SMT that is a core each;
# with SMT the default puts the executor and the receiving helper on one
# core. Other threads float over the rank's CPUs. A benchmark aid, to see
# what placement does to a hop: mkccl-run -n 4 -- bench/pin_threads.sh mkccl-perf ...
set -euo pipefail
n=${MKCCL_RUN_NRANKS:?run me under mkccl-run}
r=${MKCCL_RUN_RANK:?run me under mkccl-run}
IFS=,: read -ra order <<<"${PIN_ORDER:-exec,sockr,socks,proxy}"

# CPUs core by core: "cpu cpu ..." per core, cores in order of their first CPU.
mapfile -t cores < <(cat /sys/devices/system/cpu/cpu[0-9]*/topology/thread_siblings_list | sort -u |
  awk -F'[,-]' '{ print $1, $0 }' | sort -n | cut -d' ' -f2)
k=$((${#cores[@]} / n))
((k >= 1)) || k=1
cpus=()
for ((c = r * k; c < (r + 1) * k && c < ${#cores[@]}; c++)); do
  # A siblings list is "a,b" or "a-b".
  IFS=',-' read -ra sib <<<"${cores[c]}"
  if [[ ${cores[c]} == *-* ]]; then for ((x = sib[0]; x <= sib[1]; x++)); do cpus+=("$x"); done; else cpus+=("${sib[@]}"); fi
done
((${#cpus[@]})) || { echo "pin_threads: no CPUs for rank $r" >&2; exit 1; }
all=$(IFS=,; echo "${cpus[*]}")

taskset -c "$all" "$@" &
pid=$!
# The names appear during init; pin each once (up to 5 s).
declare -A pinned=()
for ((i = 0; i < 500 && ${#pinned[@]} < ${#order[@]}; i++)); do
  for task in /proc/$pid/task/*; do
    tid=${task##*/}
    name=$(cat "$task/comm" 2>/dev/null) || continue
    role=
    case $name in
      mkccl-proxy) role=proxy ;;
      mkccl-socks*) role=socks ;;
      mkccl-sockr*) role=sockr ;;
    esac
    [[ $tid == "$pid" ]] && role=exec
    [[ -n $role && -z ${pinned[$role]:-} ]] || continue
    for j in "${!order[@]}"; do
      if [[ ${order[j]} == "$role" ]]; then
        taskset -pc "${cpus[j % ${#cpus[@]}]}" "$tid" >/dev/null 2>&1 && pinned[$role]=$tid
      fi
    done
  done
  sleep 0.01
done
((r == 0)) && echo "# pin_threads rank 0: cpus $all; ${!pinned[*]} pinned ($(printf '%s ' "${order[@]}"))" >&2
wait "$pid"
