/* Profiler v3 as v6: init takes only the context and the mask;
 * descriptors carry name/commHash (left NULL/0, as NCCL does) and
 * nMaxChannels; KernelCh has no timer; only ProxyStep and ProxyCtrl states
 * reach it. */
#include <string.h>

#include "profile/profile_adapt.h"

static adapt_slot_t adapt_v3_slot;
#define V3 ((const ncclProfiler_v3_t*)adapt_v3_slot.plugin)

static ncclResult_t adapt_v3_init(void** ctx, uint64_t commId, int* mask, const char* commName, int nNodes,
                                  int nRanks, int rank, ncclDebugLogger_t log) {
  (void)commId, (void)commName, (void)nNodes, (void)nRanks, (void)rank, (void)log;
  return V3->init(ctx, mask);
}

static ncclResult_t adapt_v3_start(void* ctx, void** eHandle, ncclProfilerEventDescr_v6_t* d) {
  *eHandle = NULL;
  if (!(d->type & PROFILE_TYPES_V3)) return ncclSuccess;
  ncclProfilerEventDescr_v3_t e;
  memset(&e, 0, sizeof(e));
  e.type = (uint8_t)d->type;
  e.parentObj = d->parentObj;
  e.rank = d->rank;
  switch (d->type) {
    case ncclProfileColl:
      e.parentObj = d->coll.parentGroup;
      e.coll.seqNumber = d->coll.seqNumber;
      e.coll.func = d->coll.func;
      e.coll.sendBuff = d->coll.sendBuff;
      e.coll.recvBuff = d->coll.recvBuff;
      e.coll.count = d->coll.count;
      e.coll.root = d->coll.root;
      e.coll.datatype = d->coll.datatype;
      e.coll.nMaxChannels = d->coll.nChannels;
      e.coll.nWarps = d->coll.nWarps;
      e.coll.algo = d->coll.algo;
      e.coll.proto = d->coll.proto;
      break;
    case ncclProfileP2p:
      e.parentObj = d->p2p.parentGroup;
      e.p2p.func = d->p2p.func;
      e.p2p.buff = d->p2p.buff;
      e.p2p.datatype = d->p2p.datatype;
      e.p2p.count = d->p2p.count;
      e.p2p.peer = d->p2p.peer;
      break;
    case ncclProfileProxyOp:
      e.proxyOp.pid = d->proxyOp.pid;
      e.proxyOp.channelId = d->proxyOp.channelId;
      e.proxyOp.peer = d->proxyOp.peer;
      e.proxyOp.nSteps = d->proxyOp.nSteps;
      e.proxyOp.chunkSize = d->proxyOp.chunkSize;
      e.proxyOp.isSend = d->proxyOp.isSend;
      break;
    case ncclProfileProxyStep: e.proxyStep.step = d->proxyStep.step; break;
    case ncclProfileKernelCh: e.kernelCh.channelId = d->kernelCh.channelId; break;
    case ncclProfileNetPlugin:
      e.netPlugin.id = d->netPlugin.id;
      e.netPlugin.data = d->netPlugin.data;
      break;
    default: break;
  }
  return V3->startEvent(ctx, eHandle, &e);
}

static ncclResult_t adapt_v3_stop(void* eHandle) { return V3->stopEvent(eHandle); }

static ncclResult_t adapt_v3_state(void* eHandle, ncclProfilerEventState_v6_t state,
                                   ncclProfilerEventStateArgs_v6_t* args) {
  ncclProfilerEventStateArgs_v3_t a;
  if (!profile_adapt_old_state(state, args, &a)) return ncclSuccess;
  return V3->recordEventState(eHandle, state, &a);
}

static ncclResult_t adapt_v3_finalize(void* ctx) { return V3->finalize(ctx); }

static ncclProfiler_v6_t adapt_v3_as_v6 = {NULL, adapt_v3_init, adapt_v3_start, adapt_v3_stop, adapt_v3_state,
                                           adapt_v3_finalize};

static ncclResult_t adapt_v3_wrap(const void* plugin, const void** presented) {
  ncclResult_t res = adapt_slot_take(&adapt_v3_slot, plugin);
  if (res != ncclSuccess) return res;
  adapt_v3_as_v6.name = V3->name;
  *presented = &adapt_v3_as_v6;
  return ncclSuccess;
}

static void adapt_v3_unwrap(void) { adapt_slot_drop(&adapt_v3_slot); }

const plugin_adapter_t profile_adapt_v3 = {adapt_v3_wrap, adapt_v3_unwrap};
