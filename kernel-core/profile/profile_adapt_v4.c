/* Profiler v4 as v6: 8-bit event types, no API events, Coll/P2p parented
 * by their Group, init's arguments in v4's order. */
#include <string.h>

#include "profile/profile_adapt.h"

static adapt_slot_t adapt_v4_slot;
#define V4 ((const ncclProfiler_v4_t*)adapt_v4_slot.plugin)

static ncclResult_t adapt_v4_init(void** ctx, uint64_t commId, int* mask, const char* commName, int nNodes,
                                  int nRanks, int rank, ncclDebugLogger_t log) {
  return V4->init(ctx, mask, commName, commId, nNodes, nRanks, rank, log);
}

static ncclResult_t adapt_v4_start(void* ctx, void** eHandle, ncclProfilerEventDescr_v6_t* d) {
  *eHandle = NULL;
  if (!(d->type & PROFILE_TYPES_V3)) return ncclSuccess;
  ncclProfilerEventDescr_v4_t e;
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
      e.coll.nChannels = d->coll.nChannels;
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
      e.p2p.nChannels = d->p2p.nChannels;
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
    case ncclProfileKernelCh:
      e.kernelCh.channelId = d->kernelCh.channelId;
      e.kernelCh.pTimer = d->kernelCh.pTimer;
      break;
    case ncclProfileNetPlugin:
      e.netPlugin.id = d->netPlugin.id;
      e.netPlugin.data = d->netPlugin.data;
      break;
    default: break; /* Group, ProxyCtrl: no fields */
  }
  return V4->startEvent(ctx, eHandle, &e);
}

static ncclResult_t adapt_v4_stop(void* eHandle) { return V4->stopEvent(eHandle); }

static ncclResult_t adapt_v4_state(void* eHandle, ncclProfilerEventState_v6_t state,
                                   ncclProfilerEventStateArgs_v6_t* args) {
  ncclProfilerEventStateArgs_v4_t a;
  memset(&a, 0, sizeof(a));
  switch (state) {
    case ncclProfilerProxyOpInProgress_v4: break;
    case ncclProfilerProxyStepSendGPUWait:
    case ncclProfilerProxyStepSendPeerWait_v4:
    case ncclProfilerProxyStepSendWait:
    case ncclProfilerProxyStepRecvWait:
    case ncclProfilerProxyStepRecvFlushWait:
    case ncclProfilerProxyStepRecvGPUWait:
      if (args) a.proxyStep.transSize = args->proxyStep.transSize;
      break;
    case ncclProfilerNetPluginUpdate:
      if (args) a.netPlugin.data = args->netPlugin.data;
      break;
    case ncclProfilerKernelChStop:
      if (args) a.kernelCh.pTimer = args->kernelCh.pTimer;
      break;
    case ncclProfilerProxyCtrlIdle:
    case ncclProfilerProxyCtrlActive:
    case ncclProfilerProxyCtrlSleep:
    case ncclProfilerProxyCtrlWakeup:
    case ncclProfilerProxyCtrlAppend:
    case ncclProfilerProxyCtrlAppendEnd:
      if (args) a.proxyCtrl.appendedProxyOps = args->proxyCtrl.appendedProxyOps;
      break;
    default: return ncclSuccess;
  }
  return V4->recordEventState(eHandle, state, &a);
}

static ncclResult_t adapt_v4_finalize(void* ctx) { return V4->finalize(ctx); }

static ncclProfiler_v6_t adapt_v4_as_v6 = {NULL, adapt_v4_init, adapt_v4_start, adapt_v4_stop, adapt_v4_state,
                                           adapt_v4_finalize};

static ncclResult_t adapt_v4_wrap(const void* plugin, const void** presented) {
  ncclResult_t res = adapt_slot_take(&adapt_v4_slot, plugin);
  if (res != ncclSuccess) return res;
  adapt_v4_as_v6.name = V4->name;
  *presented = &adapt_v4_as_v6;
  return ncclSuccess;
}

static void adapt_v4_unwrap(void) { adapt_slot_drop(&adapt_v4_slot); }

const plugin_adapter_t profile_adapt_v4 = {adapt_v4_wrap, adapt_v4_unwrap};
