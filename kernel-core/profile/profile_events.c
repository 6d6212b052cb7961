/* Communicator profiling state and the event calls (see profile.h). A
 * profiler's errors never reach the caller: NCCL's rule, profiling must
 * not change what the library does. */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "base/log.h"
#include "profile/profile.h"
#include "profile/profile_names.h"

ncclResult_t profile_comm_init(profile_comm_t* pc, uint64_t commId, const char* commName, int nNodes, int nRanks,
                               int rank) {
  if (!pc) return MK_FAIL(ncclInvalidArgument, "profile_comm_init: NULL state");
  memset(pc, 0, sizeof(*pc));
  pc->rank = rank;
  const ncclProfiler_v6_t* prof = NULL;
  MK_CHECK(profile_plugin_acquire(&prof, NULL));
  if (!prof) {
    profile_plugin_release();
    return ncclSuccess;
  }
  int mask = 0;
  void* ctx = NULL;
  /* The plugin keeps &pc->mask: it may change the mask at any time. */
  ncclResult_t res = prof->init(&ctx, commId, &pc->mask, commName ? commName : "", nNodes, nRanks, rank, log_write);
  mask = __atomic_load_n(&pc->mask, __ATOMIC_RELAXED);
  if (res != ncclSuccess) {
    MK_WARN("PROFILER/Plugin: '%s' init failed (%d): rank %d runs unprofiled", prof->name ? prof->name : "?",
            (int)res, rank);
    __atomic_store_n(&pc->mask, 0, __ATOMIC_RELAXED);
    profile_plugin_release();
    return ncclSuccess;
  }
  pc->prof = prof;
  pc->timed = profile_plugin_timed();
  pc->ctx = ctx;
  MK_INFO(NCCL_INIT | NCCL_PROFILE, "PROFILER/Plugin: '%s' on rank %d, activation mask 0x%x",
          prof->name ? prof->name : "?", rank, mask);
  return ncclSuccess;
}

void profile_comm_fini(profile_comm_t* pc) {
  if (!pc || !pc->prof) return;
  __atomic_store_n(&pc->mask, 0, __ATOMIC_RELAXED);
  pc->prof->finalize(pc->ctx);
  pc->prof = NULL;
  pc->timed = NULL;
  pc->ctx = NULL;
  profile_plugin_release();
}

uint64_t profile_clock_ns(profile_clock_t* clk) {
  if (!clk->ns) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    clk->ns = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
    if (!clk->ns) clk->ns = 1;
  }
  return clk->ns;
}

/* clk: the moment the call stands for, through the plugin's timed entries
 * when it has them (NULL, or no timed entries: the plugin reads its clock). */
static void* profile_start_at(profile_comm_t* pc, ncclProfilerEventDescr_v6_t* d, profile_clock_t* clk) {
  void* h = NULL;
  if (!pc->prof) return NULL;
  d->rank = pc->rank;
  ncclResult_t res = clk && pc->timed ? pc->timed->startEventAt(pc->ctx, &h, d, profile_clock_ns(clk))
                                      : pc->prof->startEvent(pc->ctx, &h, d);
  return res == ncclSuccess ? h : NULL;
}

static void* profile_start(profile_comm_t* pc, ncclProfilerEventDescr_v6_t* d) { return profile_start_at(pc, d, NULL); }

#define DESCR(name, t, parent)        \
  ncclProfilerEventDescr_v6_t name;   \
  memset(&name, 0, sizeof(name));     \
  name.type = (t);                    \
  name.parentObj = (parent)

void* profile_group_api_start_(profile_comm_t* pc, int depth, int graphCaptured) {
  DESCR(d, ncclProfileGroupApi, NULL);
  d.groupApi.groupDepth = depth;
  d.groupApi.graphCaptured = graphCaptured != 0;
  return profile_start(pc, &d);
}

void* profile_coll_api_start_(profile_comm_t* pc, void* groupApi, int func, size_t count, int datatype, int root,
                              void* stream, int graphCaptured) {
  DESCR(d, ncclProfileCollApi, groupApi);
  d.collApi.func = profile_func_str(func);
  d.collApi.count = count;
  d.collApi.datatype = profile_datatype_str(datatype);
  d.collApi.root = root;
  d.collApi.stream = stream;
  d.collApi.graphCaptured = graphCaptured != 0;
  return profile_start(pc, &d);
}

void* profile_p2p_api_start_(profile_comm_t* pc, void* groupApi, int func, size_t count, int datatype, void* stream,
                             int graphCaptured) {
  DESCR(d, ncclProfileP2pApi, groupApi);
  d.p2pApi.func = profile_func_str(func);
  d.p2pApi.count = count;
  d.p2pApi.datatype = profile_datatype_str(datatype);
  d.p2pApi.stream = stream;
  d.p2pApi.graphCaptured = graphCaptured != 0;
  return profile_start(pc, &d);
}

void* profile_kernel_launch_start_(profile_comm_t* pc, void* groupApi, void* stream) {
  DESCR(d, ncclProfileKernelLaunch, groupApi);
  d.kernelLaunch.stream = stream;
  return profile_start(pc, &d);
}

void* profile_group_start_(profile_comm_t* pc) {
  DESCR(d, ncclProfileGroup, NULL);
  return profile_start(pc, &d);
}

void* profile_coll_start_(profile_comm_t* pc, void* group, void* collApi, const profile_coll_t* info) {
  DESCR(d, ncclProfileColl, collApi);
  d.coll.seqNumber = pc->collSeq++;
  d.coll.func = profile_func_str(info->func);
  d.coll.sendBuff = info->sendBuff;
  d.coll.recvBuff = info->recvBuff;
  d.coll.count = info->count;
  d.coll.root = info->root;
  d.coll.datatype = profile_datatype_str(info->datatype);
  d.coll.nChannels = (uint8_t)info->nChannels;
  d.coll.nWarps = (uint8_t)info->nWarps;
  d.coll.algo = profile_algo_str(info->algo);
  d.coll.proto = profile_proto_str(info->proto);
  d.coll.parentGroup = group;
  return profile_start(pc, &d);
}

void* profile_p2p_start_(profile_comm_t* pc, void* group, void* p2pApi, int func, void* buff, int datatype,
                         size_t count, int peer, int nChannels) {
  DESCR(d, ncclProfileP2p, p2pApi);
  d.p2p.func = profile_func_str(func);
  d.p2p.buff = buff;
  d.p2p.datatype = profile_datatype_str(datatype);
  d.p2p.count = count;
  d.p2p.peer = peer;
  d.p2p.nChannels = (uint8_t)nChannels;
  d.p2p.parentGroup = group;
  return profile_start(pc, &d);
}

void* profile_proxy_op_start_(profile_comm_t* pc, void* parent, int channelId, int peer, int nSteps, int chunkSize,
                              int isSend) {
  return profile_proxy_op_start_at_(pc, parent, channelId, peer, nSteps, chunkSize, isSend, NULL);
}

void* profile_proxy_op_start_at_(profile_comm_t* pc, void* parent, int channelId, int peer, int nSteps, int chunkSize,
                                 int isSend, profile_clock_t* clk) {
  DESCR(d, ncclProfileProxyOp, parent);
  /* Asked each time, not cached: ops start on several threads at once (the
   * executors' proxy lanes), and a cached value would outlive a fork. */
  d.proxyOp.pid = getpid();
  d.proxyOp.channelId = (uint8_t)channelId;
  d.proxyOp.peer = peer;
  d.proxyOp.nSteps = nSteps;
  d.proxyOp.chunkSize = chunkSize;
  d.proxyOp.isSend = isSend;
  return profile_start_at(pc, &d, clk);
}

void* profile_proxy_step_start_(profile_comm_t* pc, void* proxyOp, int step) {
  return profile_proxy_step_start_at_(pc, proxyOp, step, NULL);
}

void* profile_proxy_step_start_at_(profile_comm_t* pc, void* proxyOp, int step, profile_clock_t* clk) {
  DESCR(d, ncclProfileProxyStep, proxyOp);
  d.proxyStep.step = step;
  return profile_start_at(pc, &d, clk);
}

void* profile_proxy_ctrl_start_(profile_comm_t* pc) {
  DESCR(d, ncclProfileProxyCtrl, NULL);
  return profile_start(pc, &d);
}

void* profile_kernel_ch_start_(profile_comm_t* pc, void* parent, int channelId, uint64_t pTimer) {
  DESCR(d, ncclProfileKernelCh, parent);
  d.kernelCh.channelId = (uint8_t)channelId;
  d.kernelCh.pTimer = pTimer;
  return profile_start(pc, &d);
}

void profile_event_stop_(profile_comm_t* pc, void* handle) { profile_event_stop_at_(pc, handle, NULL); }

void profile_event_stop_at_(profile_comm_t* pc, void* handle, profile_clock_t* clk) {
  if (!pc || !pc->prof || !handle) return;
  if (clk && pc->timed) pc->timed->stopEventAt(handle, profile_clock_ns(clk));
  else pc->prof->stopEvent(handle);
}

void profile_event_state_(profile_comm_t* pc, void* handle, ncclProfilerEventState_t state,
                          ncclProfilerEventStateArgs_v6_t* args) {
  profile_event_state_at_(pc, handle, state, args, NULL);
}

void profile_event_state_at_(profile_comm_t* pc, void* handle, ncclProfilerEventState_t state,
                             ncclProfilerEventStateArgs_v6_t* args, profile_clock_t* clk) {
  ncclProfilerEventStateArgs_v6_t none;
  if (!pc || !pc->prof || !handle) return;
  if (!args) {
    memset(&none, 0, sizeof(none));
    args = &none;
  }
  if (clk && pc->timed) pc->timed->recordEventStateAt(handle, state, args, profile_clock_ns(clk));
  else pc->prof->recordEventState(handle, state, args);
}
