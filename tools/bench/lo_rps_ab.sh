#!/usr/bin/env bash
# Loopback receive steering A/B for host AllReduce over sockets: mkccl and
# Open MPI tcp (host_sweep.sh, HOST_SWEEP_PATH=net) under three settings of
# `lo`, round after round, then `lo` as it was found:
#   off   rps_cpus 0 (the default: the receiver's TCP work runs in the
#         sender's send(), in its softirq);
#   rps   rps_cpus = every CPU (the work goes to a CPU picked by flow hash);
#   rfs   rps plus flow steering (to the CPU where the receiving thread last
#         ran; rps_sock_flow_entries and lo's rps_flow_cnt 32768).
# A host setting, not a library one: both libraries run under each. Needs
# root and a writable /sys (device machines); prints why it stops if not.
#   there: run(command="bash tools/bench/lo_rps_ab.sh", carry=[".carry"])
# LO_RPS_ROUNDS (3), LO_RPS_MODES ("off rps rfs"); the sweep's own knobs
# (HOST_SWEEP_RANKS, _MIN, _MAX, _ITERS, ...) pass through.
set -uo pipefail
cd "$(dirname "$0")/../.."
Q=/sys/class/net/lo/queues/rx-0
FLOWS=/proc/sys/net/core/rps_sock_flow_entries
if ! [[ -w $Q/rps_cpus && -w $FLOWS ]]; then
  echo "lo_rps_ab: $Q/rps_cpus or $FLOWS is not writable here (uid $(id -u)); nothing measured"
  exit 0
fi
old_cpus=$(cat "$Q/rps_cpus") old_cnt=$(cat "$Q/rps_flow_cnt") old_flows=$(cat "$FLOWS")
restore() {
  echo "$old_cpus" >"$Q/rps_cpus"
  echo "$old_cnt" >"$Q/rps_flow_cnt"
  echo "$old_flows" >"$FLOWS"
}
trap restore EXIT
# Every CPU as a hex mask as wide as the CPUs, in the comma-separated
# 32-bit words sysfs takes (a wider one, 0000ffff for 16 CPUs, did not take
# and said nothing: hence the check in put).
all_cpus() {
  python3 -c "import os
h, words = '%x' % ((1 << os.cpu_count()) - 1), []
while h: words.insert(0, h[-8:]); h = h[:-8]
print(','.join(words))"
}
# Write a setting and say so when the kernel refuses it (a write that fails
# must not pass for a measured mode).
put() {
  if ! echo "$1" >"$2" || { [[ $2 == *rps_cpus && $1 != 0 && $(cat "$2") =~ ^[0,]+$ ]]; }; then
    echo "lo_rps_ab: writing $1 to $2 did not take (now $(cat "$2"))"
    return 1
  fi
}
set_mode() {
  case $1 in
    off) put 0 "$Q/rps_cpus" && put 0 "$Q/rps_flow_cnt" && put 0 "$FLOWS" ;;
    rps) put "$(all_cpus)" "$Q/rps_cpus" && put 0 "$Q/rps_flow_cnt" && put 0 "$FLOWS" ;;
    rfs) put "$(all_cpus)" "$Q/rps_cpus" && put 32768 "$Q/rps_flow_cnt" && put 32768 "$FLOWS" ;;
    *) echo "lo_rps_ab: unknown mode $1"; return 1 ;;
  esac
}
echo "# lo_rps_ab: found rps_cpus=$old_cpus rps_flow_cnt=$old_cnt rps_sock_flow_entries=$old_flows"
for round in $(seq "${LO_RPS_ROUNDS:-3}"); do
  for mode in ${LO_RPS_MODES:-off rps rfs}; do
    set_mode "$mode" || exit 1
    echo "### round $round, lo $mode (rps_cpus=$(cat "$Q/rps_cpus"))"
    HOST_SWEEP_PATH=net HOST_SWEEP_RANKS=${HOST_SWEEP_RANKS:-4} HOST_SWEEP_MIN=${HOST_SWEEP_MIN:-1M} \
      HOST_SWEEP_MAX=${HOST_SWEEP_MAX:-4M} HOST_SWEEP_ITERS=${HOST_SWEEP_ITERS:-300} \
      HOST_SWEEP_WARMUP=${HOST_SWEEP_WARMUP:-20} bash tools/bench/host_sweep.sh | grep -v '^# host_sweep'
  done
done
