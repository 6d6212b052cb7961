/* The trace profiler as NCCL profiler v5 and v6 (plus mkcclPluginInfo_v1 and
 * mkcclProfilerTimed_v1).
 * Per communicator: events into the pool; at finalize the trace
 * <MKCCL_PROFILER_DIR>/mkccl-trace-<commId>-r<rank>.json and, with
 * MKCCL_PROFILER_SUMMARY, the summary ...-r<rank>.txt. The activation mask
 * is MKCCL_PROFILER_MASK. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mkccl_plugin_params.h"
#include "profiler/mkccl_profiler_timed_v1.h"
#include "profiler.h"

#define EXPORT __attribute__((visibility("default")))

static const mkcclParamDecl_v1 profiler_params[] = {
#define PLUGIN_PARAM PLUGIN_PARAM_DECL
#include "profiler_params.def"
#undef PLUGIN_PARAM
};
static plugin_params_t profiler_pp = {NULL, profiler_params, 4};
#define PLUGIN_PARAM(name, type, def, help) static inline PLUGIN_PARAM_DEFINE(profiler_param_, &profiler_pp, name, type)
#include "profiler_params.def"
#undef PLUGIN_PARAM

static void profiler_bind(const mkcclServices_v1* services) { profiler_pp.services = services; }

EXPORT const mkcclPluginInfo_v1_t mkcclPluginInfo_v1 = {sizeof(mkcclPluginInfo_v1_t), MKCCL_PLUGIN_ABI_VERSION,
                                                        "profiler", "1.0", profiler_params, 4, profiler_bind};

static ncclResult_t profiler_init(void** context, uint64_t commId, int* mask, const char* commName, int nNodes,
                                  int nRanks, int rank, ncclDebugLogger_t log) {
  profiler_ctx_t* ctx = aligned_alloc(64, sizeof(*ctx)); /* its pool index has a cache line of its own */
  if (!ctx) return ncclSystemError;
  memset(ctx, 0, sizeof(*ctx));
  ctx->rank = rank;
  ctx->nRanks = nRanks;
  ctx->nNodes = nNodes;
  ctx->commId = commId;
  ctx->log = log;
  ctx->pid = getpid();
  snprintf(ctx->commName, sizeof(ctx->commName), "%s", commName ? commName : "");
  const char* dir = profiler_param_MKCCL_PROFILER_DIR();
  snprintf(ctx->dir, sizeof(ctx->dir), "%s", dir && *dir ? dir : ".");
  ctx->summary = profiler_param_MKCCL_PROFILER_SUMMARY() != 0;
  int64_t maxEvents = profiler_param_MKCCL_PROFILER_MAX_EVENTS();
  const int64_t cap = (int64_t)PROFILER_MAX_BLOCKS * PROFILER_BLOCK_EVENTS;
  ctx->maxEvents = (uint64_t)(maxEvents < 1 ? 1 : maxEvents > cap ? cap : maxEvents);
  struct timespec rt, mt;
  clock_gettime(CLOCK_REALTIME, &rt);
  clock_gettime(CLOCK_MONOTONIC, &mt);
  ctx->wallOffsetNs = ((int64_t)rt.tv_sec - (int64_t)mt.tv_sec) * 1000000000ll + (rt.tv_nsec - mt.tv_nsec);
  if (profiler_pool_init(ctx) != 0) {
    free(ctx);
    return ncclSystemError;
  }
  *mask = (int)profiler_param_MKCCL_PROFILER_MASK();
  *context = ctx;
  return ncclSuccess;
}

/* Where a parent handle may be followed: not across processes (PXN). */
static profiler_event_t* profiler_parent(const ncclProfilerEventDescr_v6_t* d, pid_t self) {
  if (d->type == ncclProfileProxyOp && d->proxyOp.pid != self) return NULL;
  return d->parentObj;
}

/* ns: the moment the core gives (mkcclProfilerTimed_v1), 0: now. */
static ncclResult_t profiler_start_at(void* context, void** eHandle, ncclProfilerEventDescr_v6_t* d, uint64_t ns) {
  profiler_ctx_t* ctx = context;
  *eHandle = NULL;
  profiler_event_t* e = profiler_event_alloc(ctx);
  if (!e) return ncclSuccess;
  e->type = d->type;
  e->parent = profiler_parent(d, ctx->pid);
  switch (d->type) {
    case ncclProfileColl:
      e->parent = d->coll.parentGroup; /* the trace nests collectives in groups */
      e->coll.func = d->coll.func;
      e->coll.datatype = d->coll.datatype;
      e->coll.algo = d->coll.algo;
      e->coll.proto = d->coll.proto;
      e->coll.seq = d->coll.seqNumber;
      e->coll.count = d->coll.count;
      e->coll.root = d->coll.root;
      e->coll.nChannels = d->coll.nChannels;
      break;
    case ncclProfileP2p:
      e->parent = d->p2p.parentGroup;
      e->coll.func = d->p2p.func;
      e->coll.datatype = d->p2p.datatype;
      e->coll.count = d->p2p.count;
      e->coll.root = d->p2p.peer;
      e->coll.nChannels = d->p2p.nChannels;
      break;
    case ncclProfileGroupApi: e->api.depth = d->groupApi.groupDepth; break;
    case ncclProfileCollApi:
      e->api.func = d->collApi.func;
      e->api.datatype = d->collApi.datatype;
      e->api.count = d->collApi.count;
      break;
    case ncclProfileP2pApi:
      e->api.func = d->p2pApi.func;
      e->api.datatype = d->p2pApi.datatype;
      e->api.count = d->p2pApi.count;
      break;
    case ncclProfileProxyOp:
      e->op.channel = d->proxyOp.channelId;
      e->op.peer = d->proxyOp.peer;
      e->op.nSteps = d->proxyOp.nSteps;
      e->op.chunkSize = d->proxyOp.chunkSize;
      e->op.isSend = d->proxyOp.isSend;
      break;
    case ncclProfileProxyStep: e->step.step = d->proxyStep.step; break;
    case ncclProfileKernelCh: e->net.channel = d->kernelCh.channelId; break;
    case ncclProfileNetPlugin: {
      e->net.id = d->netPlugin.id;
      uint32_t kind = (uint32_t)d->netPlugin.id & NCCL_PROFILER_NET_TYPE_MASK;
      if (d->netPlugin.data && kind == NCCL_PROFILER_NET_TYPE_SOCK)
        e->net.length = ((const ncclProfilerNetSockDescr_v1_t*)d->netPlugin.data)->sock.length;
      else if (d->netPlugin.data && kind == NCCL_PROFILER_NET_TYPE_IB)
        e->net.length = ((const ncclProfilerNetIbDescr_v1_t*)d->netPlugin.data)->qp.length;
      break;
    }
    default: break;
  }
  e->start = ns ? ns : profiler_now();
  *eHandle = e;
  return ncclSuccess;
}

static ncclResult_t profiler_start(void* context, void** eHandle, ncclProfilerEventDescr_v6_t* d) {
  return profiler_start_at(context, eHandle, d, 0);
}

static ncclResult_t profiler_stop_at(void* eHandle, uint64_t ns) {
  profiler_event_t* e = eHandle;
  if (e) e->stop = ns ? ns : profiler_now();
  return ncclSuccess;
}

static ncclResult_t profiler_stop(void* eHandle) { return profiler_stop_at(eHandle, 0); }

static int profiler_step_state_index(ncclProfilerEventState_t s) {
  switch (s) {
    case ncclProfilerProxyStepSendGPUWait: return 0;
    case ncclProfilerProxyStepSendPeerWait_v4: return 1;
    case ncclProfilerProxyStepSendWait: return 2;
    case ncclProfilerProxyStepRecvWait: return 3;
    case ncclProfilerProxyStepRecvFlushWait: return 4;
    case ncclProfilerProxyStepRecvGPUWait: return 5;
    default: return -1;
  }
}

static ncclResult_t profiler_record_at(void* eHandle, ncclProfilerEventState_v6_t state,
                                       ncclProfilerEventStateArgs_v6_t* args, uint64_t ns) {
  profiler_event_t* e = eHandle;
  if (!e) return ncclSuccess;
  int i = profiler_step_state_index(state);
  if (e->type == ncclProfileProxyStep && i >= 0) {
    e->step.stateTs[i] = ns ? ns : profiler_now();
    if (args) e->step.transSize = args->proxyStep.transSize;
  } else if (e->type == ncclProfileGroupApi && state == ncclProfilerGroupStartApiStop) {
    e->api.stateTs[0] = ns ? ns : profiler_now();
  } else if (e->type == ncclProfileGroupApi && state == ncclProfilerGroupEndApiStart) {
    e->api.stateTs[1] = ns ? ns : profiler_now();
  } else if (e->type == ncclProfileNetPlugin && state == ncclProfilerNetPluginUpdate && args && args->netPlugin.data) {
    uint32_t kind = (uint32_t)e->net.id & NCCL_PROFILER_NET_TYPE_MASK;
    if (kind == NCCL_PROFILER_NET_TYPE_SOCK)
      e->net.length = ((const ncclProfilerNetSockDescr_v1_t*)args->netPlugin.data)->sock.length;
  }
  return ncclSuccess;
}

static ncclResult_t profiler_record(void* eHandle, ncclProfilerEventState_v6_t state,
                                    ncclProfilerEventStateArgs_v6_t* args) {
  return profiler_record_at(eHandle, state, args, 0);
}

static ncclResult_t profiler_finalize(void* context) {
  profiler_ctx_t* ctx = context;
  if (!ctx) return ncclSuccess;
  profiler_pool_quiesce(ctx);
  char path[1200];
  snprintf(path, sizeof(path), "%s/mkccl-trace-%016llx-r%d.json", ctx->dir, (unsigned long long)ctx->commId, ctx->rank);
  int bad = profiler_trace_write(ctx, path);
  if (!bad && ctx->summary) {
    snprintf(path, sizeof(path), "%s/mkccl-trace-%016llx-r%d.txt", ctx->dir, (unsigned long long)ctx->commId,
             ctx->rank);
    bad = profiler_summary_write(ctx, path);
  }
  if (ctx->log) {
    uint64_t dropped = atomic_load(&ctx->dropped);
    ctx->log(bad ? NCCL_LOG_WARN : NCCL_LOG_INFO, NCCL_PROFILE, __FILE__, __LINE__,
             "PROFILER/trace: rank %d: %s %s (%llu events, %llu dropped)", ctx->rank, bad ? "could not write" : "wrote",
             path, (unsigned long long)profiler_event_count(ctx), (unsigned long long)dropped);
  }
  profiler_pool_free(ctx);
  free(ctx);
  return ncclSuccess;
}

/* v5's descriptor is v6's prefix for every event v5 knows. */
static ncclResult_t profiler_start_v5(void* context, void** eHandle, ncclProfilerEventDescr_v5_t* d5) {
  ncclProfilerEventDescr_v6_t d;
  memset(&d, 0, sizeof(d));
  memcpy(&d, d5, sizeof(*d5) < sizeof(d) ? sizeof(*d5) : sizeof(d));
  return profiler_start(context, eHandle, &d);
}

EXPORT const ncclProfiler_v6_t ncclProfiler_v6 = {"mkccl-trace", profiler_init, profiler_start, profiler_stop,
                                                  profiler_record, profiler_finalize};
/* mkcclProfilerTimed_v1 (profiler/mkccl_profiler_timed_v1.h): the core
 * passes one clock read for calls made at one moment. */
EXPORT const mkcclProfilerTimed_v1_t mkcclProfilerTimed_v1 = {profiler_start_at, profiler_stop_at, profiler_record_at};
EXPORT const ncclProfiler_v5_t ncclProfiler_v5 = {"mkccl-trace", profiler_init, profiler_start_v5, profiler_stop,
                                                  profiler_record, profiler_finalize};
