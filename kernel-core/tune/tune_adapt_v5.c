/* Tuner v5 as v6: the same calls, without getChunkSize (a v5 table is
 * shorter than v6's, so it cannot be read as one). */
#include "tune/tune_adapt.h"

static adapt_slot_t adapt_v5_slot;
#define V5 ((const ncclTuner_v5_t*)adapt_v5_slot.plugin)

static ncclResult_t adapt_v5_init(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes, ncclDebugLogger_t log,
                                  ncclNvlDomainInfo_v6_t* nvl, ncclTunerConstants_v6_t* constants) {
  return V5->init(ctx, commId, nRanks, nNodes, log, nvl, constants);
}

static ncclResult_t adapt_v5_get_coll_info(void* ctx, ncclFunc_t func, size_t nBytes, int numPipeOps, float** table,
                                           int numAlgo, int numProto, int regBuff, int* nChannels) {
  return V5->getCollInfo(ctx, func, nBytes, numPipeOps, table, numAlgo, numProto, regBuff, nChannels);
}

static ncclResult_t adapt_v5_finalize(void* ctx) { return V5->finalize(ctx); }

static ncclTuner_v6_t adapt_v5_as_v6 = {
    .init = adapt_v5_init, .getCollInfo = adapt_v5_get_coll_info, .finalize = adapt_v5_finalize};

static ncclResult_t adapt_v5_wrap(const void* plugin, const void** presented) {
  ncclResult_t res = adapt_slot_take(&adapt_v5_slot, plugin);
  if (res != ncclSuccess) return res;
  adapt_v5_as_v6.name = V5->name;
  *presented = &adapt_v5_as_v6;
  return ncclSuccess;
}

static void adapt_v5_unwrap(void) { adapt_slot_drop(&adapt_v5_slot); }

const plugin_adapter_t tune_adapt_v5 = {adapt_v5_wrap, adapt_v5_unwrap};

/* v6 is what the core speaks: nothing to adapt. */
static ncclResult_t adapt_v6_wrap(const void* plugin, const void** presented) {
  *presented = plugin;
  return ncclSuccess;
}

static void adapt_v6_unwrap(void) {}

const plugin_adapter_t tune_adapt_v6 = {adapt_v6_wrap, adapt_v6_unwrap};
