/* Profiler v2 as v6: v3's conversions, plus trafficBytes (left 0, as NCCL
 * does) and no KernelCh or NetPlugin events. */
#include <string.h>

#include "profile/profile_adapt.h"

static adapt_slot_t adapt_v2_slot;
#define V2 ((const ncclProfiler_v2_t*)adapt_v2_slot.plugin)

static ncclResult_t adapt_v2_init(void** ctx, uint64_t commId, int* mask, const char* commName, int nNodes,
                                  int nRanks, int rank, ncclDebugLogger_t log) {
  (void)commId, (void)commName, (void)nNodes, (void)nRanks, (void)rank, (void)log;
  return V2->init(ctx, mask);
}

static ncclResult_t adapt_v2_start(void* ctx, void** eHandle, ncclProfilerEventDescr_v6_t* d) {
  *eHandle = NULL;
  if (!(d->type & PROFILE_TYPES_V1)) return ncclSuccess;
  ncclProfilerEventDescr_v2_t e;
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
    default: break;
  }
  return V2->startEvent(ctx, eHandle, &e);
}

static ncclResult_t adapt_v2_stop(void* eHandle) { return V2->stopEvent(eHandle); }

static ncclResult_t adapt_v2_state(void* eHandle, ncclProfilerEventState_v6_t state,
                                   ncclProfilerEventStateArgs_v6_t* args) {
  ncclProfilerEventStateArgs_v3_t a3;
  if (!profile_adapt_old_state(state, args, &a3)) return ncclSuccess;
  ncclProfilerEventStateArgs_v2_t a;
  memcpy(&a, &a3, sizeof(a)); /* same layout in v1..v3 */
  return V2->recordEventState(eHandle, state, &a);
}

static ncclResult_t adapt_v2_finalize(void* ctx) { return V2->finalize(ctx); }

static ncclProfiler_v6_t adapt_v2_as_v6 = {NULL, adapt_v2_init, adapt_v2_start, adapt_v2_stop, adapt_v2_state,
                                           adapt_v2_finalize};

static ncclResult_t adapt_v2_wrap(const void* plugin, const void** presented) {
  ncclResult_t res = adapt_slot_take(&adapt_v2_slot, plugin);
  if (res != ncclSuccess) return res;
  adapt_v2_as_v6.name = V2->name;
  *presented = &adapt_v2_as_v6;
  return ncclSuccess;
}

static void adapt_v2_unwrap(void) { adapt_slot_drop(&adapt_v2_slot); }

const plugin_adapter_t profile_adapt_v2 = {adapt_v2_wrap, adapt_v2_unwrap};
