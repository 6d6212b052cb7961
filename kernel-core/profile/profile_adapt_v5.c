/* Profiler v5 as v6: v5's descriptor is v6's without the copy-engine and
 * kernel-step members, at the same offsets; state arguments are the same. */
#include <string.h>

#include "profile/profile_adapt.h"

static adapt_slot_t adapt_v5_slot;
#define V5 ((const ncclProfiler_v5_t*)adapt_v5_slot.plugin)

static ncclResult_t adapt_v5_init(void** ctx, uint64_t commId, int* mask, const char* commName, int nNodes,
                                  int nRanks, int rank, ncclDebugLogger_t log) {
  return V5->init(ctx, commId, mask, commName, nNodes, nRanks, rank, log);
}

static ncclResult_t adapt_v5_start(void* ctx, void** eHandle, ncclProfilerEventDescr_v6_t* d) {
  *eHandle = NULL;
  if (d->type & (ncclProfileCeColl | ncclProfileCeSync | ncclProfileCeBatch)) return ncclSuccess;
  ncclProfilerEventDescr_v5_t e;
  memcpy(&e, d, sizeof(e) < sizeof(*d) ? sizeof(e) : sizeof(*d));
  return V5->startEvent(ctx, eHandle, &e);
}

static ncclResult_t adapt_v5_stop(void* eHandle) { return V5->stopEvent(eHandle); }

static ncclResult_t adapt_v5_state(void* eHandle, ncclProfilerEventState_v6_t state,
                                   ncclProfilerEventStateArgs_v6_t* args) {
  if (state >= ncclProfilerCeCollStart) return ncclSuccess;
  return V5->recordEventState(eHandle, state, args);
}

static ncclResult_t adapt_v5_finalize(void* ctx) { return V5->finalize(ctx); }

static ncclProfiler_v6_t adapt_v5_as_v6 = {NULL, adapt_v5_init, adapt_v5_start, adapt_v5_stop, adapt_v5_state,
                                           adapt_v5_finalize};

static ncclResult_t adapt_v5_wrap(const void* plugin, const void** presented) {
  ncclResult_t res = adapt_slot_take(&adapt_v5_slot, plugin);
  if (res != ncclSuccess) return res;
  adapt_v5_as_v6.name = V5->name;
  *presented = &adapt_v5_as_v6;
  return ncclSuccess;
}

static void adapt_v5_unwrap(void) { adapt_slot_drop(&adapt_v5_slot); }

const plugin_adapter_t profile_adapt_v5 = {adapt_v5_wrap, adapt_v5_unwrap};

static ncclResult_t adapt_v6_wrap(const void* plugin, const void** presented) {
  *presented = plugin;
  return ncclSuccess;
}

static void adapt_v6_unwrap(void) {}

const plugin_adapter_t profile_adapt_v6 = {adapt_v6_wrap, adapt_v6_unwrap};
