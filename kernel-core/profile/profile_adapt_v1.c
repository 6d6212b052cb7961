/* Profiler v1 as v6: v2's conversions with numbers for strings (NCCL's
 * function, datatype, algorithm and protocol indices; 0xff unknown), op
 * and trafficBytes 0, isCollnet / isNvls from the algorithm. */
#include <string.h>

#include "profile/profile_adapt.h"
#include "profile/profile_names.h"

static adapt_slot_t adapt_v1_slot;
#define V1 ((const ncclProfiler_v1_t*)adapt_v1_slot.plugin)

static ncclResult_t adapt_v1_init(void** ctx, uint64_t commId, int* mask, const char* commName, int nNodes,
                                  int nRanks, int rank, ncclDebugLogger_t log) {
  (void)commId, (void)commName, (void)nNodes, (void)nRanks, (void)rank, (void)log;
  return V1->init(ctx, mask);
}

static ncclResult_t adapt_v1_start(void* ctx, void** eHandle, ncclProfilerEventDescr_v6_t* d) {
  *eHandle = NULL;
  if (!(d->type & PROFILE_TYPES_V1)) return ncclSuccess;
  ncclProfilerEventDescr_v1_t e;
  memset(&e, 0, sizeof(e));
  e.type = (uint8_t)d->type;
  e.parentObj = d->parentObj;
  e.rank = d->rank;
  switch (d->type) {
    case ncclProfileColl: {
      unsigned algo = profile_algo_code(d->coll.algo);
      e.parentObj = d->coll.parentGroup;
      e.coll.seqNumber = d->coll.seqNumber;
      e.coll.func = (uint8_t)profile_func_code(d->coll.func);
      e.coll.sendBuff = d->coll.sendBuff;
      e.coll.recvBuff = d->coll.recvBuff;
      e.coll.count = d->coll.count;
      e.coll.root = d->coll.root;
      e.coll.datatype = (uint8_t)profile_datatype_code(d->coll.datatype);
      e.coll.nMaxChannels = d->coll.nChannels;
      e.coll.nWarps = d->coll.nWarps;
      e.coll.algo = (uint8_t)algo;
      e.coll.proto = (uint8_t)profile_proto_code(d->coll.proto);
      e.coll.isCollnet = algo == 2 || algo == 3;
      e.coll.isNvls = algo == 4 || algo == 5;
      break;
    }
    case ncclProfileP2p:
      e.parentObj = d->p2p.parentGroup;
      e.p2p.func = (uint8_t)profile_func_code(d->p2p.func);
      e.p2p.buff = d->p2p.buff;
      e.p2p.datatype = (uint8_t)profile_datatype_code(d->p2p.datatype);
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
  return V1->startEvent(ctx, eHandle, &e);
}

static ncclResult_t adapt_v1_stop(void* eHandle) { return V1->stopEvent(eHandle); }

static ncclResult_t adapt_v1_state(void* eHandle, ncclProfilerEventState_v6_t state,
                                   ncclProfilerEventStateArgs_v6_t* args) {
  ncclProfilerEventStateArgs_v3_t a3;
  if (!profile_adapt_old_state(state, args, &a3)) return ncclSuccess;
  ncclProfilerEventStateArgs_v1_t a;
  memcpy(&a, &a3, sizeof(a)); /* same layout in v1..v3 */
  return V1->recordEventState(eHandle, state, &a);
}

static ncclResult_t adapt_v1_finalize(void* ctx) { return V1->finalize(ctx); }

static ncclProfiler_v6_t adapt_v1_as_v6 = {NULL, adapt_v1_init, adapt_v1_start, adapt_v1_stop, adapt_v1_state,
                                           adapt_v1_finalize};

static ncclResult_t adapt_v1_wrap(const void* plugin, const void** presented) {
  ncclResult_t res = adapt_slot_take(&adapt_v1_slot, plugin);
  if (res != ncclSuccess) return res;
  adapt_v1_as_v6.name = V1->name;
  *presented = &adapt_v1_as_v6;
  return ncclSuccess;
}

static void adapt_v1_unwrap(void) { adapt_slot_drop(&adapt_v1_slot); }

const plugin_adapter_t profile_adapt_v1 = {adapt_v1_wrap, adapt_v1_unwrap};
