/* The default tuner: mkccl's built-in cost model (common/costmodel,
 * linked in, not copied) as an NCCL tuner v5 and v6, plus
 * mkcclPluginInfo_v1. Loaded into NCCL it replaces NCCL's costs by the
 * model's for the cells both know (ring and tree); cells the model does not
 * cost (CollNet, NVLS, PAT) keep NCCL's. It leaves channels and chunk sizes
 * to the core. Topology: nRanks and nNodes from init; bandwidths from
 * MKCCL_TUNER_INTRA_BW / MKCCL_TUNER_INTER_BW (GB/s), the link class from
 * MKCCL_TUNER_INTRA_LINK; the latencies are the
 * tuning constants the core passes to init. */
#include <stdlib.h>
#include <string.h>

#include "costmodel/costmodel.h"
#include "mkccl_plugin_params.h"
#include "tuner/nccl_tuner.h"

#define EXPORT __attribute__((visibility("default")))

static const mkcclParamDecl_v1 tuner_params[] = {
#define PLUGIN_PARAM PLUGIN_PARAM_DECL
#include "tuner_params.def"
#undef PLUGIN_PARAM
};
static plugin_params_t tuner_pp = {NULL, tuner_params, 4};
#define PLUGIN_PARAM(name, type, def, help) static inline PLUGIN_PARAM_DEFINE(tuner_param_, &tuner_pp, name, type)
#include "tuner_params.def"
#undef PLUGIN_PARAM

static void tuner_bind(const mkcclServices_v1* services) { tuner_pp.services = services; }

EXPORT const mkcclPluginInfo_v1_t mkcclPluginInfo_v1 = {
    sizeof(mkcclPluginInfo_v1_t), MKCCL_PLUGIN_ABI_VERSION, "tuner", "1.0", tuner_params, 4, tuner_bind};

typedef struct {
  costmodel_topo_t topo;
  ncclTunerConstants_v5_t constants;
} tuner_ctx_t;

static double tuner_param_double(const char* s) { return strtod(s, NULL); }

static ncclResult_t tuner_init(void** ctxOut, uint64_t commId, size_t nRanks, size_t nNodes, ncclDebugLogger_t log,
                               ncclNvlDomainInfo_v5_t* nvl, ncclTunerConstants_v5_t* constants) {
  (void)commId;
  tuner_ctx_t* ctx = calloc(1, sizeof(*ctx));
  if (!ctx) return ncclSystemError;
  costmodel_topo_default(&ctx->topo, (int)nRanks, (int)nNodes);
  if (nvl && nvl->maxRanksPerNvlDomain > 0) ctx->topo.ranksPerNode = nvl->maxRanksPerNvlDomain;
  const char* link = tuner_param_MKCCL_TUNER_INTRA_LINK();
  ctx->topo.intraLink = link && strcmp(link, "pci") == 0 ? NCCL_HW_PCI : NCCL_HW_NVLINK;
  double intra = tuner_param_double(tuner_param_MKCCL_TUNER_INTRA_BW()),
         inter = tuner_param_double(tuner_param_MKCCL_TUNER_INTER_BW());
  if (intra > 0) ctx->topo.intraBw = intra;
  if (inter > 0) ctx->topo.interBw = inter;
  ctx->topo.gpu = tuner_param_MKCCL_TUNER_GPU() != 0;
  if (constants) ctx->constants = *constants; /* the core's latencies: NCCL's own, or mkccl's model's */
  else costmodel_constants(&ctx->topo, &ctx->constants);
  if (log)
    log(NCCL_LOG_INFO, NCCL_TUNING, __FILE__, __LINE__, "TUNER/mkccl-model: %zu ranks, %zu nodes, %.1f/%.1f GB/s",
        nRanks, nNodes, ctx->topo.intraBw, ctx->topo.interBw);
  *ctxOut = ctx;
  return ncclSuccess;
}

static ncclResult_t tuner_get_coll_info(void* context, ncclFunc_t func, size_t nBytes, int numPipeOps,
                                        float** collCostTable, int numAlgo, int numProto, int regBuff,
                                        int* nChannels) {
  (void)numPipeOps, (void)regBuff, (void)nChannels;
  const tuner_ctx_t* ctx = context;
  if (numAlgo != NCCL_NUM_ALGORITHMS || numProto != NCCL_NUM_PROTOCOLS || func < 0 || func >= ncclNumFuncs)
    return ncclSuccess; /* a table shape this model does not know: leave it */
  float model[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  int nc = costmodel_channels(nBytes, 1);
  costmodel_table(&ctx->topo, &ctx->constants, func, nBytes, nc, 1, model);
  float(*t)[NCCL_NUM_PROTOCOLS] = (float(*)[NCCL_NUM_PROTOCOLS])collCostTable;
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
      if (t[a][p] != (float)NCCL_ALGO_PROTO_IGNORE && model[a][p] >= 0) t[a][p] = model[a][p];
  return ncclSuccess;
}

static ncclResult_t tuner_finalize(void* context) {
  free(context);
  return ncclSuccess;
}

EXPORT const ncclTuner_v6_t ncclTunerPlugin_v6 = {"mkccl-model", tuner_init, tuner_get_coll_info, tuner_finalize,
                                                   NULL};
EXPORT const ncclTuner_v5_t ncclTunerPlugin_v5 = {"mkccl-model", tuner_init, tuner_get_coll_info, tuner_finalize};
