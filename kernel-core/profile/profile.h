/* Profiling: the core's side of NCCL's profiler plugin ABI.
 *
 * One profiler library per process (NCCL_PROFILER_PLUGIN, then the
 * manifests), any ABI v1..v6, presented as v6 by the adapters; one
 * profile_comm_t per communicator, initialized with it. Every event call
 * first reads the communicator's activation mask (the plugin holds a
 * pointer to it and may change it at any time): with no profiler, or the
 * event's bit clear, a call costs one load and one branch (the inline
 * wrappers below) and returns NULL. Handles are the plugin's; NULL handles
 * are accepted everywhere and do nothing.
 *
 * Hierarchy and where each call belongs (NCCL's):
 *   the API calls (group/group.c, through plan_profile.c):
 *     profile_group_api_start   when a call first queues on the communicator in a
 *                               group (explicit or implicit); GroupStartApiStop at once
 *     profile_group_api_state   GroupEndApiStart when the outermost ncclGroupEnd begins
 *     profile_coll_api_start / profile_p2p_api_start   per queued collective / send /
 *                               recv, parent the GroupApi event; stopped once queued
 *     profile_kernel_launch_start   around the executor launch, parent the GroupApi
 *     profile_group_api_stop    when the group has run
 *   plan/ (at group end; plan_profile.c):
 *     profile_group_start       once per launched group
 *     profile_coll_start / profile_p2p_start   per task, parents the Group and the
 *                               task's CollApi/P2pApi event (may be NULL)
 *     profile_proxy_sub_attach  in plan_proxy_add, for each sub of a proxy op, with the
 *                               task's Coll/P2p event: the proxy then reports ProxyOp,
 *                               ProxyStep and state events for it by itself
 *     profile_event_stop        for Coll/P2p once enqueued (NCCL's meaning; host
 *                               executors: once run), then the Group
 *   proxy/ (proxy_loop.c, wired here):
 *     profile_proxy_prepare / profile_proxy_observe   around each proxyProgress call
 *     profile_proxy_finish      when the op leaves the active list (done or dropped)
 *     profile_proxy_ctrl_*      per run of ops a communicator posted, when the loop
 *                               takes them: Append, AppendEnd (count). The thread's
 *                               idle/sleep states are not reported: it serves every
 *                               communicator
 *   device/host executor: profile_kernel_ch_start / _stop per channel and work item.
 *   net plugins: profile_net_callback is the ncclProfilerCallback_t the core hands
 *     to net v10+ init (plugin/net.c). The transport passes, as isend/irecv's
 *     phandle for relative step k of a sub, ((void**)sub->profilerHandle)[k % MKCCL_STEPS]
 *     when sub->profilerHandle is not NULL (send: k = transmitted, recv: k = posted);
 *     those are NULL when NetPlugin was off as the op was attached.
 *
 * ProxyStep events are derived from a sub-op's counters (one event per
 * slice, steps numbered from 0 within the sub): a step starts when it
 * enters the proxy's window [done, done + MKCCL_STEPS) (sends record
 * SendGPUWait then), sends record SendWait when transmitted; receives
 * record RecvWait when posted, RecvFlushWait when received ahead of
 * transmitted, RecvGPUWait when transmitted; every step stops when done. */
#ifndef MKCCL_PROFILE_PROFILE_H
#define MKCCL_PROFILE_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "nccl.h"
#include "profiler/mkccl_profiler_timed_v1.h"
#include "profiler/nccl_profiler.h"
#include "transport/mkccl_transport_v1.h"

typedef struct profile_comm {
  int mask;                       /* activation mask, set by the plugin's init: read at every event */
  const ncclProfiler_v6_t* prof;  /* NULL: no profiler for this communicator */
  const mkcclProfilerTimed_v1_t* timed; /* the plugin's timed entries, NULL when it has none */
  void* ctx;                      /* the plugin's context */
  int rank;
  uint64_t collSeq;               /* sequence number of the next collective */
} profile_comm_t;

static inline int profile_active(const profile_comm_t* pc, int type) {
  return pc && (__atomic_load_n(&pc->mask, __ATOMIC_RELAXED) & type);
}

/* Communicator lifetime: init takes the process's profiler (loading it the
 * first time) and calls its init; without one, or when its init fails
 * (logged), the communicator runs unprofiled. fini calls finalize. */
ncclResult_t profile_comm_init(profile_comm_t* pc, uint64_t commId, const char* commName, int nNodes, int nRanks,
                               int rank);
void profile_comm_fini(profile_comm_t* pc);

/* What a Coll event describes; strings are made from the numbers. */
typedef struct {
  int func;            /* ncclFunc_t */
  const void* sendBuff;
  void* recvBuff;
  size_t count;
  int root;
  int datatype;        /* ncclDataType_t */
  int nChannels;
  int nWarps;
  int algo, proto;     /* NCCL_ALGO_*, NCCL_PROTO_* */
} profile_coll_t;

/* Calls made at one moment (the proxy's pass over an op after a progress
 * call) share one clock read, taken by the first call that needs it, when
 * the plugin has timed entries (mkcclProfilerTimed_v1); start with {0}. */
typedef struct {
  uint64_t ns; /* CLOCK_MONOTONIC ns, 0 until read */
} profile_clock_t;
uint64_t profile_clock_ns(profile_clock_t* clk);

/* Out-of-line bodies; call the inline wrappers. */
void* profile_group_api_start_(profile_comm_t* pc, int depth, int graphCaptured);
void* profile_coll_api_start_(profile_comm_t* pc, void* groupApi, int func, size_t count, int datatype, int root,
                              void* stream, int graphCaptured);
void* profile_p2p_api_start_(profile_comm_t* pc, void* groupApi, int func, size_t count, int datatype, void* stream,
                             int graphCaptured);
void* profile_kernel_launch_start_(profile_comm_t* pc, void* groupApi, void* stream);
void* profile_group_start_(profile_comm_t* pc);
void* profile_coll_start_(profile_comm_t* pc, void* group, void* collApi, const profile_coll_t* info);
void* profile_p2p_start_(profile_comm_t* pc, void* group, void* p2pApi, int func, void* buff, int datatype,
                         size_t count, int peer, int nChannels);
void* profile_proxy_op_start_(profile_comm_t* pc, void* parent, int channelId, int peer, int nSteps, int chunkSize,
                              int isSend);
void* profile_proxy_step_start_(profile_comm_t* pc, void* proxyOp, int step);
void* profile_proxy_op_start_at_(profile_comm_t* pc, void* parent, int channelId, int peer, int nSteps, int chunkSize,
                                 int isSend, profile_clock_t* clk);
void* profile_proxy_step_start_at_(profile_comm_t* pc, void* proxyOp, int step, profile_clock_t* clk);
void* profile_proxy_ctrl_start_(profile_comm_t* pc);
void* profile_kernel_ch_start_(profile_comm_t* pc, void* parent, int channelId, uint64_t pTimer);
void profile_event_stop_(profile_comm_t* pc, void* handle);
void profile_event_state_(profile_comm_t* pc, void* handle, ncclProfilerEventState_t state,
                          ncclProfilerEventStateArgs_v6_t* args);
/* The same at the moment clk stands for (NULL: the plugin's own clock). */
void profile_event_stop_at_(profile_comm_t* pc, void* handle, profile_clock_t* clk);
void profile_event_state_at_(profile_comm_t* pc, void* handle, ncclProfilerEventState_t state,
                             ncclProfilerEventStateArgs_v6_t* args, profile_clock_t* clk);

#define PROFILE_IF(pc, type, call) (profile_active((pc), (type)) ? (call) : NULL)

static inline void* profile_group_api_start(profile_comm_t* pc, int depth, int graphCaptured) {
  return PROFILE_IF(pc, ncclProfileGroupApi, profile_group_api_start_(pc, depth, graphCaptured));
}
/* GroupStartApiStop or GroupEndApiStart. */
static inline void profile_group_api_state(profile_comm_t* pc, void* groupApi, ncclProfilerEventState_t state) {
  if (groupApi) profile_event_state_(pc, groupApi, state, NULL);
}
static inline void profile_group_api_stop(profile_comm_t* pc, void* groupApi) {
  if (groupApi) profile_event_stop_(pc, groupApi);
}
static inline void* profile_coll_api_start(profile_comm_t* pc, void* groupApi, int func, size_t count, int datatype,
                                           int root, void* stream, int graphCaptured) {
  return PROFILE_IF(pc, ncclProfileCollApi,
                    profile_coll_api_start_(pc, groupApi, func, count, datatype, root, stream, graphCaptured));
}
static inline void* profile_p2p_api_start(profile_comm_t* pc, void* groupApi, int func, size_t count, int datatype,
                                          void* stream, int graphCaptured) {
  return PROFILE_IF(pc, ncclProfileP2pApi,
                    profile_p2p_api_start_(pc, groupApi, func, count, datatype, stream, graphCaptured));
}
static inline void* profile_kernel_launch_start(profile_comm_t* pc, void* groupApi, void* stream) {
  return PROFILE_IF(pc, ncclProfileKernelLaunch, profile_kernel_launch_start_(pc, groupApi, stream));
}
static inline void* profile_group_start(profile_comm_t* pc) {
  return PROFILE_IF(pc, ncclProfileGroup, profile_group_start_(pc));
}
static inline void* profile_coll_start(profile_comm_t* pc, void* group, void* collApi, const profile_coll_t* info) {
  return PROFILE_IF(pc, ncclProfileColl, profile_coll_start_(pc, group, collApi, info));
}
static inline void* profile_p2p_start(profile_comm_t* pc, void* group, void* p2pApi, int func, void* buff,
                                      int datatype, size_t count, int peer, int nChannels) {
  return PROFILE_IF(pc, ncclProfileP2p,
                    profile_p2p_start_(pc, group, p2pApi, func, buff, datatype, count, peer, nChannels));
}
static inline void* profile_proxy_op_start(profile_comm_t* pc, void* parent, int channelId, int peer, int nSteps,
                                           int chunkSize, int isSend) {
  return PROFILE_IF(pc, ncclProfileProxyOp,
                    profile_proxy_op_start_(pc, parent, channelId, peer, nSteps, chunkSize, isSend));
}
static inline void* profile_proxy_step_start(profile_comm_t* pc, void* proxyOp, int step) {
  return PROFILE_IF(pc, ncclProfileProxyStep, profile_proxy_step_start_(pc, proxyOp, step));
}
/* A ProxyStep state (ncclProfilerProxyStep*), with the bytes moved so far. */
static inline void profile_proxy_step_state(profile_comm_t* pc, void* step, ncclProfilerEventState_t state,
                                            size_t transSize) {
  if (!step) return;
  ncclProfilerEventStateArgs_v6_t a;
  a.proxyStep.transSize = transSize;
  profile_event_state_(pc, step, state, &a);
}
static inline void* profile_proxy_ctrl_start(profile_comm_t* pc) {
  return PROFILE_IF(pc, ncclProfileProxyCtrl, profile_proxy_ctrl_start_(pc));
}
/* ncclProfilerProxyCtrl{Idle,Active,Sleep,Wakeup,Append,AppendEnd}. */
static inline void profile_proxy_ctrl_state(profile_comm_t* pc, void* ctrl, ncclProfilerEventState_t state,
                                            int appendedProxyOps) {
  if (!ctrl) return;
  ncclProfilerEventStateArgs_v6_t a;
  a.proxyCtrl.appendedProxyOps = appendedProxyOps;
  profile_event_state_(pc, ctrl, state, &a);
}
static inline void* profile_kernel_ch_start(profile_comm_t* pc, void* parent, int channelId, uint64_t pTimer) {
  return PROFILE_IF(pc, ncclProfileKernelCh, profile_kernel_ch_start_(pc, parent, channelId, pTimer));
}
/* Records KernelChStop with the stop timer, then stops the event. */
static inline void profile_kernel_ch_stop(profile_comm_t* pc, void* ch, uint64_t pTimer) {
  if (!ch) return;
  ncclProfilerEventStateArgs_v6_t a;
  a.kernelCh.pTimer = pTimer;
  profile_event_state_(pc, ch, ncclProfilerKernelChStop, &a);
  profile_event_stop_(pc, ch);
}
/* Any event started above. */
static inline void profile_event_stop(profile_comm_t* pc, void* handle) {
  if (handle) profile_event_stop_(pc, handle);
}

/* Proxy ops: the planner attaches a tracker to a sub when ProxyOp, ProxyStep
 * or NetPlugin events are active (sub->profilerHandle; nothing otherwise);
 * the proxy loop reports from the counters. isSend: the sub's side. */
ncclResult_t profile_proxy_sub_attach(profile_comm_t* pc, void* parent, int isSend, mkcclProxySubOp_v1* sub);
static inline int profile_proxy_tracked(const mkcclProxyOp_v1* op) {
  for (int s = 0; s < op->nsubs; s++)
    if (op->subs[s].profilerHandle) return 1;
  return 0;
}
/* Before a proxyProgress call: steps entering the window start (so a net
 * plugin's events find their parent step). */
void profile_proxy_prepare(mkcclProxyOp_v1* op);
/* After it: states and stops from the counters' movement. */
void profile_proxy_observe(mkcclProxyOp_v1* op);
/* The op is done or dropped: open events stop, trackers are freed. */
void profile_proxy_finish(mkcclProxyOp_v1* op);

/* The net plugins' ncclProfilerCallback_t (type: 0 start, 1 stop, 2 update,
 * 3 update and stop; pHandle as described above). Returns 0. */
int profile_net_callback(void** eHandle, int type, void* pHandle, int64_t pluginId, void* extData);

/* The process's profiler library (tests and tools). */
ncclResult_t profile_plugin_acquire(const ncclProfiler_v6_t** prof, int* abi);
/* The acquired library's mkcclProfilerTimed_v1 (NULL when it has none). */
const mkcclProfilerTimed_v1_t* profile_plugin_timed(void);
void profile_plugin_release(void);

#endif
