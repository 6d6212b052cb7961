/* Tuner v2 as v6: v2 names an algorithm and protocol instead of editing
 * the table; the adapter turns its answer into a forced (0) entry, as NCCL
 * does, when that entry is offered. */
#include "tune/tune_adapt.h"

static adapt_slot_t adapt_v2_slot;
#define V2 ((const ncclTuner_v2_t*)adapt_v2_slot.plugin)

static ncclResult_t adapt_v2_init(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes, ncclDebugLogger_t log,
                                  ncclNvlDomainInfo_v6_t* nvl, ncclTunerConstants_v6_t* constants) {
  (void)commId, (void)nvl, (void)constants;
  return V2->init(nRanks, nNodes, log, ctx);
}

static ncclResult_t adapt_v2_get_coll_info(void* ctx, ncclFunc_t func, size_t nBytes, int numPipeOps, float** table,
                                           int numAlgo, int numProto, int regBuff, int* nChannels) {
  (void)regBuff;
  int algo = NCCL_ALGO_UNDEF, proto = NCCL_PROTO_UNDEF;
  ncclResult_t res = V2->getCollInfo(ctx, func, nBytes, tune_adapt_has_collnet(table), tune_adapt_has_nvls(table),
                                     numPipeOps, &algo, &proto, nChannels);
  if (res != ncclSuccess) return res;
  if (algo >= 0 && algo < numAlgo && proto >= 0 && proto < numProto) {
    float(*t)[NCCL_NUM_PROTOCOLS] = (float(*)[NCCL_NUM_PROTOCOLS])table;
    if (t[algo][proto] != (float)NCCL_ALGO_PROTO_IGNORE) t[algo][proto] = 0.0f;
  }
  return ncclSuccess;
}

static ncclResult_t adapt_v2_finalize(void* ctx) { return V2->destroy(ctx); }

static ncclTuner_v6_t adapt_v2_as_v6 = {
    .init = adapt_v2_init, .getCollInfo = adapt_v2_get_coll_info, .finalize = adapt_v2_finalize};

static ncclResult_t adapt_v2_wrap(const void* plugin, const void** presented) {
  ncclResult_t res = adapt_slot_take(&adapt_v2_slot, plugin);
  if (res != ncclSuccess) return res;
  adapt_v2_as_v6.name = V2->name;
  *presented = &adapt_v2_as_v6;
  return ncclSuccess;
}

static void adapt_v2_unwrap(void) { adapt_slot_drop(&adapt_v2_slot); }

const plugin_adapter_t tune_adapt_v2 = {adapt_v2_wrap, adapt_v2_unwrap};
