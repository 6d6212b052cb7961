/* Tuner v3 as v6: v2's init and destroy, no regBuff, no constants. */
#include "tune/tune_adapt.h"

static adapt_slot_t adapt_v3_slot;
#define V3 ((const ncclTuner_v3_t*)adapt_v3_slot.plugin)

static ncclResult_t adapt_v3_init(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes, ncclDebugLogger_t log,
                                  ncclNvlDomainInfo_v6_t* nvl, ncclTunerConstants_v6_t* constants) {
  (void)commId, (void)nvl, (void)constants;
  return V3->init(nRanks, nNodes, log, ctx);
}

static ncclResult_t adapt_v3_get_coll_info(void* ctx, ncclFunc_t func, size_t nBytes, int numPipeOps, float** table,
                                           int numAlgo, int numProto, int regBuff, int* nChannels) {
  (void)regBuff;
  return V3->getCollInfo(ctx, func, nBytes, numPipeOps, table, numAlgo, numProto, nChannels);
}

static ncclResult_t adapt_v3_finalize(void* ctx) { return V3->destroy(ctx); }

static ncclTuner_v6_t adapt_v3_as_v6 = {
    .init = adapt_v3_init, .getCollInfo = adapt_v3_get_coll_info, .finalize = adapt_v3_finalize};

static ncclResult_t adapt_v3_wrap(const void* plugin, const void** presented) {
  ncclResult_t res = adapt_slot_take(&adapt_v3_slot, plugin);
  if (res != ncclSuccess) return res;
  adapt_v3_as_v6.name = V3->name;
  *presented = &adapt_v3_as_v6;
  return ncclSuccess;
}

static void adapt_v3_unwrap(void) { adapt_slot_drop(&adapt_v3_slot); }

const plugin_adapter_t tune_adapt_v3 = {adapt_v3_wrap, adapt_v3_unwrap};
