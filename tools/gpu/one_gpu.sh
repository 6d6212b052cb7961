#!/usr/bin/env bash
# The GPU check for a machine with ONE GPU, in under 9 minutes
# (ONE_GPU_BUDGET_S, default 520 s for all cases). On the build machine:
#   tools/dev/build.sh && tools/gpu/pack.sh
# then on the GPU machine, from the repository root with .carry/ beside the tree:
#   bash tools/gpu/one_gpu.sh
#
# Two ranks share the GPU. mkccl allows that with MKCCL_ALLOW_SAME_GPU=1;
# NCCL refuses two ranks on one GPU of one host, so for NCCL each rank gets
# its own NCCL_HOSTID: NCCL then sees two hosts and talks over its net
# transport, which is where our net, tuner and profiler plugins load into it.
#   A  mkccl correctness: test_gpu_coll, 1 rank, 2 ranks in one process and
#      2 processes, over P2P, SHM and NET (watchdog on, hard time limits);
#      faults: a stuck peer, a killed peer, abort from a thread, leaks;
#      the communicator and memory API (test_gpu_api); GPUDirect RDMA over
#      NET through the test-only net-cudacopy plugin (ONE_GPU_CASES=gdr)
#      (test_gpu_fault; ONE_GPU_ONLY=A ONE_GPU_CASES='gpu_(kill|abort|leak)'
#      runs only those)
#   B  NCCL 2.28.9 hosting our plugins: net-socket, tuner-rules, profiler
#   U  UNPACK on the GPU: the unpack-device plugin's device code linked into
#      the collective kernels at init; collectives over net-socket's unpack
#      mode (NET only); the plugin swapped for another build; unpack
#      throughput vs cuMemcpy; init time without, first and cached
#   C  benchmarks, same run: 1 rank (launch latency, local copy) mkccl vs
#      NCCL; 2 "hosts" over loopback sockets: NCCL's own socket transport,
#      NCCL with our net-socket, mkccl (NET only)
#   T  NVIDIA's nccl-tests (all_reduce, all_gather, reduce_scatter, broadcast,
#      reduce, alltoall, sendrecv _perf), built here (/tmp, sm_90) against
#      NCCL's own nccl.h, each run 1 rank with NCCL's lib and with mkccl's,
#      -c 1 (data checked); fails on #wrong != 0, a non-zero exit or the wrong
#      libnccl loaded (LD_DEBUG=libs); prints both side by side. Sources:
#      .carry/nccl-tests-src (tools/gpu/pack.sh copies /tmp/nccl-tests-src;
#      NVIDIA's code is never in this repository; ONE_GPU_ONLY=T runs only it,
#      ~1.5 min; NT_ARGS overrides the nccl-tests arguments)
# Logs go to $OUT/logs.tgz (default /tmp/out); stdout carries the summary: ran, passed,
# failed, not run (cut for time: that fails the run, as a failure does;
# ONE_GPU_ONLY and ONE_GPU_CASES select what is part of the run).
set -uo pipefail
cd "$(dirname "$0")/../.."
source tools/gpu/gpu_lib.sh
ONLY=${ONE_GPU_ONLY:-AUBCT}

echo "== machine facts: NCCL headers, RDMA devices, libfabric providers"
ls "$NCCL_DIR/include" 2>&1 | tr '\n' ' '; echo
ls /sys/class/infiniband 2>&1 | head -4
command -v fi_info >/dev/null && fi_info -l 2>&1 | grep -v "^ *version" | tr '\n' ' ' | head -c 400; echo
ldconfig -p | grep -E "libibverbs|libfabric|libhwloc|libyaml" | awk '{print $1}' | tr '\n' ' '; echo
# An RDMA device here lets the conformance kit drive net-ib on hardware.
if ls /sys/class/infiniband/* >/dev/null 2>&1; then
  t netcheck_ib 90 LD_LIBRARY_PATH=$MK_LD -- $C/bin/mkccl-netcheck $P/libmkccl-net-ib.so --quick --timeout 60
fi

if [[ $ONLY == *A* ]]; then
echo "== A: mkccl correctness on one GPU"
G="LD_LIBRARY_PATH=$MK_LD MKCCL_GPU_WATCHDOG=3 MKCCL_ALLOW_SAME_GPU=1 TEST_COLL_TRACE=1"
t gpu_1rank 60 $G -- $C/bin/test_gpu_coll proc 1 quick
t gpu_thread2_p2p 60 $G MKCCL_GPU_PROBE=1 -- $C/bin/test_gpu_coll thread 2 quick
t gpu_thread2_p2p_nodirect 60 $G NCCL_P2P_DIRECT_DISABLE=1 -- $C/bin/test_gpu_coll thread 2 quick
# P2P direct between processes: a send buffer in a window (ncclMemAlloc'ed,
# --symm 1) goes as the address its receiver maps it at, and the receiving
# kernel copies from there; off, the same through the step buffers.
WIN="-- $C/bin/mkccl-run -n 2 -- $C/bin/mkccl-perf-gpu sendrecv --symm 1 -b 8 -e 256M -f 4 -n 10 -w 2 -c 1"
t gpu_p2p_win 90 $G NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,P2P $WIN
need gpu_p2p_win "Send to rank [0-9]* from a window buffer: posted at the address rank [0-9]* maps it at"
need gpu_p2p_win "P2P direct: the receiver reads window send buffers in place (another process)"
t gpu_p2p_win_nodirect 90 $G NCCL_P2P_DIRECT_DISABLE=1 $WIN
t gpu_thread2_shm 60 $G NCCL_P2P_DISABLE=1 -- $C/bin/test_gpu_coll thread 2 quick
t gpu_thread2_net 60 $G NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 -- $C/bin/test_gpu_coll thread 2 quick
t gpu_proc2_p2p 60 $G -- $C/bin/test_gpu_coll proc 2 quick
t gpu_proc2_shm 60 $G NCCL_P2P_DISABLE=1 -- $C/bin/test_gpu_coll proc 2 quick
t gpu_proc2_net 60 $G NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 -- $C/bin/test_gpu_coll proc 2 quick
# GPUDirect RDMA over NET: net-cudacopy (test-only) takes CUDA pointers and
# copies them through the driver, so transport-net keeps its step buffers in
# GPU memory, registers them NCCL_PTR_CUDA (none as host memory) and flushes
# each receive (the plugin says forceFlush). The kit's gpu-memory check on
# the same plugin first; then the collective matrix (Send/Recv included) in
# 2 processes and 2 threads, and Send/Recv and AllReduce up to 64 MB.
# The NIC net-cudacopy wraps is a socket interface wherever it sits, so
# NCCL_NET_GDR_LEVEL=SYS lifts the distance rule here; gpu_gdr_distance runs
# with the default level (PXB) and checks the decision against the distance
# the topology gives (gpu_topology prints it).
NOGDRLEVEL="NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NET_PLUGIN=$P/libmkccl-net-cudacopy.so NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET"
GDR="$NOGDRLEVEL NCCL_NET_GDR_LEVEL=SYS"
t gpu_topology 60 LD_LIBRARY_PATH=$MK_LD NCCL_NET_PLUGIN=$P/libmkccl-net-cudacopy.so -- $C/bin/mkccl-info --topology
need gpu_topology "^ *GPU 0 "
t gpu_gdr_distance 90 $G $NOGDRLEVEL -- $C/bin/test_gpu_coll proc 2 quick
need gpu_gdr_distance "receives: step buffers in GPU memory (the NIC is \(LOC\|PIX\|PXB\|P2C\) from the GPU)\|receives staged in host memory: the NIC is \(PXN\|PHB\|SYS\) from the GPU, farther than NCCL_NET_GDR_LEVEL's default PXB"
t gpu_gdr_netcheck 90 LD_LIBRARY_PATH=$MK_LD -- $C/bin/mkccl-netcheck $P/libmkccl-net-cudacopy.so --only gpu-memory
need gpu_gdr_netcheck "PASS *gpu-memory/data-cuda"
need gpu_gdr_netcheck "PASS *gpu-memory/iflush-cuda"
for m in proc thread; do
  t gpu_${m}2_gdr 90 $G $GDR -- $C/bin/test_gpu_coll $m 2 quick
  need gpu_${m}2_gdr "GPUDirect RDMA for receives: step buffers in GPU memory"
  need gpu_${m}2_gdr "GPUDirect RDMA for sends: step buffers in GPU memory"
  need gpu_${m}2_gdr "connection(s) had their step buffers in GPU memory (NCCL_PTR_CUDA), 0 in host memory, 0 moved"
  need gpu_${m}2_gdr "net-cudacopy: regMr CUDA [1-9][0-9]* HOST 0; isend from GPU [1-9][0-9]*, host 0; receives into GPU [1-9][0-9]*, host 0; iflush [1-9]"
done
for coll in sendrecv all_reduce; do
  t gpu_gdr_perf_$coll 90 $G $GDR -- $C/bin/mkccl-run -n 2 -- $C/bin/mkccl-perf-gpu $coll -b 8 -e 64M -f 8 -n 5 -w 1 -c 1
  need gpu_gdr_perf_$coll "regMr CUDA [1-9][0-9]* HOST 0;"
done
# Registered GPU buffers (--reg 1) over GPUDirect RDMA: the kernel posts a
# send's chunks by address and the proxy sends from the user's buffer;
# receives land in the user's buffer. With the plugin's regMr of user
# buffers failing (MKCCL_NET_REG_FAULT=1), the proxy copies them into the
# step buffers through the driver instead: same data, none in place.
t gpu_gdr_reg 90 $G $GDR -- $C/bin/mkccl-run -n 2 -- $C/bin/mkccl-perf-gpu sendrecv --reg 1 -b 8 -e 64M -f 8 -n 5 -w 1 -c 1
need gpu_gdr_reg "sent [1-9][0-9]* bytes of registered buffers in place (0 copied through staging), received [1-9][0-9]* in place"
t gpu_gdr_reg_fault 90 $G $GDR MKCCL_NET_REG_FAULT=1 -- $C/bin/mkccl-run -n 2 -- $C/bin/mkccl-perf-gpu sendrecv --reg 1 -b 8 -e 64M -f 8 -n 5 -w 1 -c 1
need gpu_gdr_reg_fault "sent 0 bytes of registered buffers in place ([1-9][0-9]* copied through staging), received 0 in place"
need gpu_gdr_reg_fault "goes through staging: the net plugin's regMr"
# dma-buf: net-cudacopy claims NCCL_PTR_DMABUF and checks each fd it is
# given is a dma-buf; transport-net exports one per GPU range through the
# driver (cuMemGetHandleForAddressRange) and calls regMrDmaBuf, or says
# why the GPU or driver cannot and registers with regMr.
t gpu_gdr_dmabuf 90 $G $GDR MKCCL_NET_CUDACOPY_DMABUF=1 -- $C/bin/mkccl-run -n 2 -- $C/bin/mkccl-perf-gpu sendrecv --reg 1 -b 8 -e 64M -f 8 -n 5 -w 1 -c 1
need gpu_gdr_dmabuf "GPU memory registered through dma-buf\|no dma-buf registration: "
need gpu_gdr_dmabuf "sent [1-9][0-9]* bytes of registered buffers in place (0 copied through staging), received [1-9][0-9]* in place"

# A peer that never calls the collective: ncclRemoteError within MKCCL_TIMEOUT.
t gpu_stuck_p2p 60 $G MKCCL_TIMEOUT=2 -- $C/bin/test_gpu_coll stuck 2
t gpu_stuck_shm 60 $G MKCCL_TIMEOUT=2 NCCL_P2P_DISABLE=1 -- $C/bin/test_gpu_coll stuck 2
t gpu_stuck_net 60 $G MKCCL_TIMEOUT=2 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 -- $C/bin/test_gpu_coll stuck 2
# Faults (tests/gpu/test_gpu_fault.c), each over P2P, SHM and NET:
#  kill: a peer SIGKILLed mid-AllReduce; survivors' async error within MKCCL_TIMEOUT + 4 s
#  abort: ncclCommAbort from a second thread ends an AllReduce that cannot complete
#         (MKCCL_TIMEOUT=0: the kernels' own timeout off, only the abort can end it)
#  leak: init/AllReduce/abort-or-destroy cycles leave fds, threads, GPU memory, shm as they were
#  dead: the kill with default settings (the peer watch): ncclRemoteError naming the victim within 2 s
for m in kill dead abort leak; do
  case $m in kill) to=2 lim=30 ;; dead) to= lim=30 ;; abort) to=0 lim=30 ;; leak) to=600 lim=45 ;; esac
  e=${to:+MKCCL_TIMEOUT=$to}
  t gpu_${m}_p2p $lim $G $e -- $C/bin/test_gpu_fault $m 2
  t gpu_${m}_shm $lim $G $e NCCL_P2P_DISABLE=1 -- $C/bin/test_gpu_fault $m 2
  t gpu_${m}_net $lim $G $e NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 -- $C/bin/test_gpu_fault $m 2
done
# Abort and destroy stress (tests/gpu/test_gpu_fault.c stress): rounds of an aborted AllReduce, a peer's
# destroy mid-AllReduce and an aborted non-blocking init, in the same two processes, each round
# bounded and leaving fds, threads, shm and GPU memory as before. ONE_GPU_STRESS_ROUNDS (default 30).
R=${ONE_GPU_STRESS_ROUNDS:-30}
t gpu_stress_p2p $((40 + 3 * R)) $G -- $C/bin/test_gpu_fault stress 2 $R
t gpu_stress_shm $((40 + 3 * R)) $G NCCL_P2P_DISABLE=1 -- $C/bin/test_gpu_fault stress 2 $R
t gpu_stress_net $((40 + 3 * R)) $G NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 -- $C/bin/test_gpu_fault stress 2 $R
# A fresh victim process each round killed mid-AllReduce, one survivor throughout (default settings):
# its error within 2 s naming the victim, abort bounded, its fds, threads, shm and GPU memory as after
# the first round. ONE_GPU_DEAD_ROUNDS (default 20).
D=${ONE_GPU_DEAD_ROUNDS:-20}
t gpu_deadrounds_p2p $((30 + 3 * D)) $G -- $C/bin/test_gpu_fault deadrounds 2 $D
t gpu_deadrounds_shm $((30 + 3 * D)) $G NCCL_P2P_DISABLE=1 -- $C/bin/test_gpu_fault deadrounds 2 $D
t gpu_deadrounds_net $((30 + 3 * D)) $G NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 -- $C/bin/test_gpu_fault deadrounds 2 $D
# The communicator and memory API (tests/gpu/test_gpu_api.c): split, shrink, revoke, windows on
# ncclMemAlloc'ed memory, ncclGroupSimulateEnd, non-blocking init.
for m in split shrink revoke window simulate nonblocking; do
  t gpu_api_$m 60 $G -- $C/bin/test_gpu_api $m $([[ $m == shrink ]] && echo 3 || echo 2)
done
# What frameworks do (tests/gpu/test_gpu_paths.c): PreMulSum's device scalar read as the kernel runs,
# one group on two streams, one-by-one collectives on two streams kept in call order, 72 ranks.
t gpu_paths_premul 60 $G -- $C/bin/test_gpu_paths premul 2
t gpu_paths_streams 60 $G -- $C/bin/test_gpu_paths streams 2
t gpu_paths_order_p2p 60 $G -- $C/bin/test_gpu_paths order 2
t gpu_paths_order_net 60 $G NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 -- $C/bin/test_gpu_paths order 2
t gpu_paths_wide 240 $G -- $C/bin/test_gpu_paths wide 72
# mkccl-perf-gpu's check: one wrong element on the last of 3 ranks fails the run and is counted in
# every row and the footer; without it every row and the footer say 0 (tests/tools/mkccl_perf_wrong.sh).
t gpu_perf_wrong_last_rank 90 $G -- sh tests/tools/mkccl_perf_wrong.sh $C/bin/mkccl-run $C/bin/mkccl-perf-gpu
# CUDA graphs: captured collectives replayed (P2P, SHM, NET: the proxy's ops posted by a host node at each replay).
t gpu_graph_1rank 60 $G -- $C/bin/test_gpu_coll graph 1
t gpu_graph_p2p 60 $G -- $C/bin/test_gpu_coll graph 2
t gpu_graph_shm 60 $G NCCL_P2P_DISABLE=1 -- $C/bin/test_gpu_coll graph 2
t gpu_graph_net 60 $G NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 -- $C/bin/test_gpu_coll graph 2
# The full matrix (every type and op, counts 0, 1, 7 and 1000003).
t gpu_full_proc2_p2p 200 $G -- $C/bin/test_gpu_coll proc 2
t gpu_full_proc2_shm 200 $G NCCL_P2P_DISABLE=1 -- $C/bin/test_gpu_coll proc 2
t gpu_full_proc2_net 200 $G NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 -- $C/bin/test_gpu_coll proc 2
t gpu_full_thread2_p2p 200 $G -- $C/bin/test_gpu_coll thread 2
t gpu_full_thread2_shm 200 $G NCCL_P2P_DISABLE=1 -- $C/bin/test_gpu_coll thread 2
t gpu_full_thread2_net 200 $G NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 -- $C/bin/test_gpu_coll thread 2

fi
if [[ $ONLY == *U* ]]; then
echo "== U: UNPACK through the GPU kernels (net-socket unpack mode, NET only)"
# nvJitLink of CUDA 13, from the carry when this machine has none.
if ! ldconfig -p | grep -q "libnvJitLink.so.13 " && [[ ! -e /usr/local/cuda/lib64/libnvJitLink.so.13 ]] &&
   [[ -e $C/deps/libnvJitLink.so.13.xz ]]; then
  xz -dc "$C/deps/libnvJitLink.so.13.xz" > "$C/deps/libnvJitLink.so.13" 2>/dev/null ||
    python3 -c "import lzma,sys;sys.stdout.buffer.write(lzma.open('$C/deps/libnvJitLink.so.13.xz').read())" > "$C/deps/libnvJitLink.so.13"
  echo "  nvJitLink from the carry ($(stat -c %s "$C/deps/libnvJitLink.so.13") bytes)"
fi
CACHE=/tmp/mkccl-netdev-cache; rm -rf "$CACHE"
# A case that passed over HOST because UNPACK was refused is a failure here.
UE="LD_LIBRARY_PATH=$MK_LD MKCCL_GPU_WATCHDOG=3 MKCCL_ALLOW_SAME_GPU=1 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1
  MKCCL_SOCKET_UNPACK=1 MKCCL_NET_DEVICE_CACHE_DIR=$CACHE NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET"
t unpack_bench 90 LD_LIBRARY_PATH=$MK_LD -- $C/bin/mkccl-unpack-bench $P/libmkccl-unpack-device.so
grep "^#\|^ " "$OUT/unpack_bench.log" | head -20
# Init: UNPACK off, on with an empty cache (links), on again (cached).
INIT_RUN=($C/bin/mkccl-run -n 2 -- $C/bin/mkccl-perf-gpu all_reduce -b 8M -e 8M -n 5 -w 1 -c 1)
t unpack_init_off 60 LD_LIBRARY_PATH=$MK_LD MKCCL_ALLOW_SAME_GPU=1 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 -- "${INIT_RUN[@]}"
t unpack_init_first 90 $UE -- "${INIT_RUN[@]}"
t unpack_init_cached 60 $UE -- "${INIT_RUN[@]}"
need unpack_init_first "(device unpack)"
need unpack_init_cached "from the cache"
for n in off first cached; do
  echo "  init $n: $(grep -h "ncclCommInitRank:" "$OUT/unpack_init_$n.log" | head -1) | $(grep -h "NETDEV: collective kernels\|UNPACK refused\|net receives use" "$OUT/unpack_init_$n.log" | sed 's/.*NETDEV/NETDEV/' | sort -u | tr '\n' ' ' | head -c 300)"
  grep -h "^ *8388608" "$OUT/unpack_init_$n.log" | head -1 | sed 's/^/    /'
done
t unpack_proc2 120 $UE TEST_COLL_TRACE=1 -- $C/bin/test_gpu_coll proc 2 quick
need unpack_proc2 "(device unpack)"
grep -h "device unpack\|UNPACK refused\|kernel (net device" "$OUT/unpack_proc2.log" | sed 's/.*NCCL INFO //' | sort | uniq -c | head -6
t unpack_thread2 120 $UE -- $C/bin/test_gpu_coll thread 2 quick
need unpack_thread2 "(device unpack)"
t unpack_graph 60 $UE -- $C/bin/test_gpu_coll graph 2
need unpack_graph "(device unpack)"
t unpack_full_proc2 240 $UE -- $C/bin/test_gpu_coll proc 2
need unpack_full_proc2 "(device unpack)"
# Another build of the plugin through a manifest: relinked, not rebuilt.
printf 'mkccl-manifest: 1\nplugins:\n  - name: unpack-device\n    kind: net-device\n    abi: 1\n    library: %s\n    priority: 0\n' \
  "$P/libmkccl-unpack-device-alt.so" > "$OUT/alt.yaml"
t unpack_swapped 120 $UE MKCCL_MANIFEST=$OUT/alt.yaml -- $C/bin/test_gpu_coll proc 2 quick
need unpack_swapped "(device unpack)"
need unpack_swapped "unpack-device-alt.so.*taken"
grep -h "NETDEV: collective kernels\|unpack-device-alt" "$OUT/unpack_swapped.log" | sed 's/.*NCCL INFO //' | sort -u | head -4
fi
if [[ $ONLY == *B* ]]; then
echo "== B: NCCL 2.28.9 hosting mkccl's plugins (2 ranks, one GPU, two NCCL_HOSTIDs)"
cat > "$OUT/rules.yaml" <<'EOF'
rules:
  - coll: allreduce
    bytes: [0, 64KiB]
    algo: tree
    proto: ll
  - coll: allreduce
    bytes: [64KiB, inf]
    algo: ring
    proto: simple
    channels: 2
EOF
mkdir -p "$OUT/prof"
NB="LD_LIBRARY_PATH=$NC_LD NCCL_NET_PLUGIN=$P/libmkccl-net-socket.so NCCL_TUNER_PLUGIN=$P/libmkccl-tuner-rules.so
  NCCL_PROFILER_PLUGIN=$P/libmkccl-profiler.so MKCCL_TUNER_RULES=$OUT/rules.yaml MKCCL_PROFILER_DIR=$OUT/prof
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,TUNING,ENV,PROFILE"
# First our net plugin alone, one small AllReduce; stacks if it hangs.
stacks_after 25 mkccl-perf-gpu netonly &
t nccl_hosts_net_only 40 LD_LIBRARY_PATH=$NC_LD NCCL_NET_PLUGIN=$P/libmkccl-net-socket.so NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=ALL MKCCL_SOCKET_TRACE=1 -- \
  tools/gpu/two_hosts.sh 2 $C/bin/mkccl-perf-gpu all_reduce -b 8 -e 8 -n 1 -w 0 -c 1
wait
head -c 3000 "$OUT/stacks_netonly.txt" 2>/dev/null
grep -i "warn\|error" "$OUT/nccl_hosts_net_only.log" | head -10
t nccl_hosts_plugins 90 $NB -- tools/gpu/two_hosts.sh 2 $C/bin/mkccl-perf-gpu all_reduce -b 8 -e 16M -f 4 -n 5 -w 2 -c 1
echo "  NCCL said:"
grep -ih "plugin\|Using network\|NET/\|tuner\|profiler" "$OUT/nccl_hosts_plugins.log" 2>/dev/null | grep -v "^#" | sort | uniq -c | sort -rn | head -25 | sed 's/^/  | /'
echo "  profiler output:"; ls -la "$OUT/prof" | head; for f in "$OUT"/prof/*; do [[ -f $f ]] && head -c 600 "$f" && echo; done | head -30

fi
if [[ $ONLY == *C* ]]; then
echo "== C: benchmarks"
b() { # name, ld, env..., -- args: runs mkccl-perf-gpu, keeps the table
  local name=$1; shift
  t "bench_$name" 120 "$@"
  grep "^#\|^ " "$OUT/bench_$name.log" 2>/dev/null | grep -v "^# *$" | head -60
}
b mkccl_1rank_allreduce LD_LIBRARY_PATH=$MK_LD MKCCL_PERF_HOST_US=1 -- $C/bin/mkccl-run -n 1 -- $C/bin/mkccl-perf-gpu all_reduce -b 8 -e 64M -f 8 -n 50 -w 5 -c 1
b nccl_1rank_allreduce LD_LIBRARY_PATH=$NC_LD MKCCL_PERF_HOST_US=1 -- $C/bin/mkccl-run -n 1 -- $C/bin/mkccl-perf-gpu all_reduce -b 8 -e 64M -f 8 -n 50 -w 5 -c 1
b mkccl_2host_net LD_LIBRARY_PATH=$MK_LD MKCCL_ALLOW_SAME_GPU=1 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 -- \
  tools/gpu/two_hosts.sh 2 $C/bin/mkccl-perf-gpu all_reduce -b 8 -e 256M -f 8 -n 20 -w 3 -c 1
b nccl_2host_socket LD_LIBRARY_PATH=$NC_LD NCCL_NET=Socket -- tools/gpu/two_hosts.sh 2 $C/bin/mkccl-perf-gpu all_reduce -b 8 -e 256M -f 8 -n 20 -w 3 -c 1
b nccl_2host_mkccl_net LD_LIBRARY_PATH=$NC_LD NCCL_NET_PLUGIN=$P/libmkccl-net-socket.so -- tools/gpu/two_hosts.sh 2 $C/bin/mkccl-perf-gpu all_reduce -b 8 -e 256M -f 8 -n 20 -w 3 -c 1
b mkccl_2rank_p2p LD_LIBRARY_PATH=$MK_LD MKCCL_ALLOW_SAME_GPU=1 -- \
  $C/bin/mkccl-run -n 2 -- $C/bin/mkccl-perf-gpu all_reduce -b 8 -e 256M -f 8 -n 20 -w 3 -c 1
fi
if [[ $ONLY == *T* ]]; then
echo "== T: NVIDIA's nccl-tests, built here against NCCL's nccl.h; NCCL 2.28.9 vs mkccl, 1 rank, -c 1"
nccl_tests_section "${NT_ARGS:--b 8 -e 1G -f 4 -g 1 -c 1 -w 5 -n 20}" 60
fi
gpu_done
exit $?
