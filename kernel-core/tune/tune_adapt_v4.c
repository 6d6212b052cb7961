/* Tuner v4 as v6: v2's init and destroy; getCollInfo is v6's. */
#include "tune/tune_adapt.h"

static adapt_slot_t adapt_v4_slot;
#define V4 ((const ncclTuner_v4_t*)adapt_v4_slot.plugin)

static ncclResult_t adapt_v4_init(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes, ncclDebugLogger_t log,
                                  ncclNvlDomainInfo_v6_t* nvl, ncclTunerConstants_v6_t* constants) {
  (void)commId, (void)nvl, (void)constants;
  return V4->init(nRanks, nNodes, log, ctx);
}

static ncclResult_t adapt_v4_get_coll_info(void* ctx, ncclFunc_t func, size_t nBytes, int numPipeOps, float** table,
                                           int numAlgo, int numProto, int regBuff, int* nChannels) {
  return V4->getCollInfo(ctx, func, nBytes, numPipeOps, table, numAlgo, numProto, regBuff, nChannels);
}

static ncclResult_t adapt_v4_finalize(void* ctx) { return V4->destroy(ctx); }

static ncclTuner_v6_t adapt_v4_as_v6 = {
    .init = adapt_v4_init, .getCollInfo = adapt_v4_get_coll_info, .finalize = adapt_v4_finalize};

static ncclResult_t adapt_v4_wrap(const void* plugin, const void** presented) {
  ncclResult_t res = adapt_slot_take(&adapt_v4_slot, plugin);
  if (res != ncclSuccess) return res;
  adapt_v4_as_v6.name = V4->name;
  *presented = &adapt_v4_as_v6;
  return ncclSuccess;
}

static void adapt_v4_unwrap(void) { adapt_slot_drop(&adapt_v4_slot); }

const plugin_adapter_t tune_adapt_v4 = {adapt_v4_wrap, adapt_v4_unwrap};
