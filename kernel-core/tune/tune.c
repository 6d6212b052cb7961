/* The per-communicator decision (see tune.h for the steps). */
#include "tune/tune.h"

#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"
#include "base/param.h"
#include "device/common/work.h"

struct tune_ctx {
  costmodel_topo_t topo;
  ncclTunerConstants_v5_t constants;
  tune_filter_t filter;
  const ncclTuner_v6_t* tuner;
  void* tunerCtx;
  uint8_t loggedLack[NCCL_NUM_ALGORITHMS]; /* bit per protocol: logged once per algorithm/protocol */
  int loggedTunerError;
  /* Without a plugin the answer is a pure function of the request: the
   * last one is kept, since a program repeats the same collective and the
   * model's tables cost as much as a small host collective. */
  struct {
    int valid;
    tune_request_t req; /* .supported copied into supported */
    int supported[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    tune_choice_t out;
  } last;
};

static int tune_last_matches(const tune_ctx_t* ctx, const tune_request_t* req,
                             const int (*supported)[NCCL_NUM_PROTOCOLS]) {
  const tune_request_t* l = &ctx->last.req;
  return ctx->last.valid && l->func == req->func && l->bytes == req->bytes && l->nChannelsMax == req->nChannelsMax &&
         l->numPipeOps == req->numPipeOps && l->regBuff == req->regBuff && l->chunkSize == req->chunkSize &&
         memcmp(ctx->last.supported, supported, sizeof(ctx->last.supported)) == 0;
}

void tune_supported_default(int gpu, int supported[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS]) {
  memset(supported, 0, sizeof(int) * NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS);
  for (int a = NCCL_ALGO_TREE; a <= NCCL_ALGO_RING; a++) {
    supported[a][NCCL_PROTO_LL] = supported[a][NCCL_PROTO_SIMPLE] = 1;
    supported[a][NCCL_PROTO_LL128] = gpu != 0;
  }
}

int tune_func_of_mk_coll(int mkColl) {
  switch (mkColl) {
    case MK_COLL_ALLREDUCE: return ncclFuncAllReduce;
    case MK_COLL_ALLGATHER: return ncclFuncAllGather;
    case MK_COLL_REDUCESCATTER: return ncclFuncReduceScatter;
    case MK_COLL_BROADCAST: return ncclFuncBroadcast;
    case MK_COLL_REDUCE: return ncclFuncReduce;
    case MK_COLL_SENDRECV: return ncclFuncSendRecv;
    default: return -1;
  }
}

static ncclResult_t tune_filter_load(tune_filter_t* f) {
  char err[160];
  tune_filter_init(f);
  const char* algo = param_NCCL_ALGO();
  const char* proto = param_NCCL_PROTO();
  if (tune_filter_parse(algo, TUNE_FILTER_ALGO, f, err, sizeof(err)) != 0)
    return MK_FAIL(ncclInvalidUsage, "NCCL_ALGO='%s': %s", algo, err);
  if (tune_filter_parse(proto, TUNE_FILTER_PROTO, f, err, sizeof(err)) != 0)
    return MK_FAIL(ncclInvalidUsage, "NCCL_PROTO='%s': %s", proto, err);
  if (algo && *algo) MK_INFO(NCCL_ENV | NCCL_TUNING, "NCCL_ALGO set to %s", algo);
  if (proto && *proto) MK_INFO(NCCL_ENV | NCCL_TUNING, "NCCL_PROTO set to %s", proto);
  return ncclSuccess;
}

ncclResult_t tune_ctx_create(const costmodel_topo_t* topo, const ncclTuner_v6_t* tuner, uint64_t commId,
                             tune_ctx_t** out) {
  if (!topo || !out || topo->nRanks < 1 || topo->nNodes < 1 || topo->ranksPerNode < 1)
    return MK_FAIL(ncclInvalidArgument, "tune: bad topology summary");
  tune_ctx_t* ctx = calloc(1, sizeof(*ctx));
  if (!ctx) return MK_FAIL(ncclSystemError, "tune: out of memory");
  ncclResult_t res = tune_filter_load(&ctx->filter);
  if (res != ncclSuccess) {
    free(ctx);
    return res;
  }
  ctx->topo = *topo;
  costmodel_constants(topo, &ctx->constants);
  if (tuner) {
    /* NCCL's NVLink domains are the nodes: mkccl knows no wider ones. */
    ncclNvlDomainInfo_v6_t nvl = {topo->nNodes, topo->ranksPerNode, topo->ranksPerNode};
    ncclTunerConstants_v6_t constants = ctx->constants;
    res = tuner->init(&ctx->tunerCtx, commId, (size_t)topo->nRanks, (size_t)topo->nNodes, log_write, &nvl, &constants);
    if (res != ncclSuccess) {
      MK_WARN("TUNER/Plugin: '%s' init failed (%d): tuning with the built-in model", tuner->name ? tuner->name : "?",
              (int)res);
    } else {
      ctx->tuner = tuner;
      ctx->constants = constants; /* the plugin may have changed them */
    }
  }
  *out = ctx;
  return ncclSuccess;
}

void tune_ctx_destroy(tune_ctx_t* ctx) {
  if (!ctx) return;
  if (ctx->tuner) ctx->tuner->finalize(ctx->tunerCtx);
  free(ctx);
}

const ncclTuner_v6_t* tune_ctx_tuner(const tune_ctx_t* ctx) { return ctx ? ctx->tuner : NULL; }

static int tune_request_ok(const tune_request_t* req) {
  return req && req->func >= 0 && req->func < ncclNumFuncs && req->nChannelsMax >= 1;
}

/* Model table with the user's exclusions, then the plugin's edits. */
static void tune_table_fill(tune_ctx_t* ctx, const tune_request_t* req, float table[][NCCL_NUM_PROTOCOLS],
                            float before[][NCCL_NUM_PROTOCOLS], int* nChannels) {
  int nc = costmodel_channels(req->bytes, req->nChannelsMax);
  costmodel_table(&ctx->topo, &ctx->constants, (ncclFunc_t)req->func, req->bytes, nc, req->nChannelsMax, table);
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
      if (!tune_filter_allows(&ctx->filter, req->func, a, p)) table[a][p] = (float)NCCL_ALGO_PROTO_IGNORE;
  float saved[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  memcpy(saved, table, sizeof(saved));
  if (before) memcpy(before, table, sizeof(saved));
  if (ctx->tuner) {
    int pluginNc = nc;
    ncclResult_t res = ctx->tuner->getCollInfo(ctx->tunerCtx, (ncclFunc_t)req->func, req->bytes,
                                               req->numPipeOps > 0 ? req->numPipeOps : 1, (float**)table,
                                               NCCL_NUM_ALGORITHMS, NCCL_NUM_PROTOCOLS, req->regBuff, &pluginNc);
    if (res != ncclSuccess) {
      memcpy(table, saved, sizeof(saved));
      if (!ctx->loggedTunerError++)
        MK_WARN("TUNER/Plugin: getCollInfo failed (%d): using the built-in model's table", (int)res);
    } else if (pluginNc >= 1) {
      nc = pluginNc < req->nChannelsMax ? pluginNc : req->nChannelsMax; /* honoured within what exists */
    }
  }
  *nChannels = nc;
}

ncclResult_t tune_table(tune_ctx_t* ctx, const tune_request_t* req, float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS],
                        int* nChannels) {
  if (!ctx || !tune_request_ok(req) || !table || !nChannels)
    return MK_FAIL(ncclInvalidArgument, "tune_table: bad arguments");
  tune_table_fill(ctx, req, table, NULL, nChannels);
  return ncclSuccess;
}

/* Lowest entry >= 0 of the allowed cells; 0 and the cell in algo, proto; -1 if none. */
static int tune_table_min(float table[][NCCL_NUM_PROTOCOLS], const int (*allowed)[NCCL_NUM_PROTOCOLS], int* algo,
                          int* proto) {
  float best = 0;
  int found = -1;
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++) {
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) {
      if (table[a][p] < 0 || (allowed && !allowed[a][p])) continue;
      if (found < 0 || table[a][p] < best) {
        best = table[a][p];
        *algo = a;
        *proto = p;
        found = 0;
      }
    }
  }
  return found;
}

ncclResult_t tune_decide_request(tune_ctx_t* ctx, const tune_request_t* req, tune_choice_t* out) {
  if (!ctx || !tune_request_ok(req) || !out) return MK_FAIL(ncclInvalidArgument, "tune_decide: bad arguments");
  int dflt[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  const int(*supported)[NCCL_NUM_PROTOCOLS] = req->supported;
  if (!supported) {
    tune_supported_default(ctx->topo.gpu, dflt);
    supported = (const int(*)[NCCL_NUM_PROTOCOLS])dflt;
  }
  if (!ctx->tuner && tune_last_matches(ctx, req, supported)) {
    *out = ctx->last.out;
    return ncclSuccess;
  }
  int allowed[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
      allowed[a][p] = supported[a][p] && tune_filter_allows(&ctx->filter, req->func, a, p);

  float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS], before[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  int nc = 1, algo = -1, proto = -1, anyAlgo = -1, anyProto = -1;
  tune_table_fill(ctx, req, table, before, &nc);
  if (tune_table_min(table, NULL, &anyAlgo, &anyProto) == 0 && !supported[anyAlgo][anyProto] &&
      !(ctx->loggedLack[anyAlgo] & (1u << anyProto))) {
    ctx->loggedLack[anyAlgo] |= (uint8_t)(1u << anyProto);
    MK_INFO(NCCL_TUNING, "TUNER: %s/%s is preferred for %s but mkccl's executors lack it: skipped",
            costmodel_algo_name(anyAlgo), costmodel_proto_name(anyProto), costmodel_func_name(req->func));
  }
  if (tune_table_min(table, (const int(*)[NCCL_NUM_PROTOCOLS])allowed, &algo, &proto) != 0) {
    /* The plugin left nothing usable: the model's table (with the user's
     * exclusions) decides. */
    if (tune_table_min(before, (const int(*)[NCCL_NUM_PROTOCOLS])allowed, &algo, &proto) != 0)
      return MK_FAIL(ncclInvalidUsage,
                     "tune: no algorithm/protocol for %s is costed, supported by the executors and allowed "
                     "(NCCL_ALGO/NCCL_PROTO)", costmodel_func_name(req->func));
    if (ctx->tuner && !ctx->loggedTunerError++)
      MK_WARN("TUNER/Plugin: its table leaves nothing mkccl can run for %s: using the built-in model's",
              costmodel_func_name(req->func));
  }

  float model[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  costmodel_table(&ctx->topo, &ctx->constants, (ncclFunc_t)req->func, req->bytes, nc, req->nChannelsMax, model);
  int modelAlgo = -1, modelProto = -1, modelNc = costmodel_channels(req->bytes, req->nChannelsMax);
  if (ctx->tuner) {
    float alone[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    costmodel_table(&ctx->topo, &ctx->constants, (ncclFunc_t)req->func, req->bytes, modelNc, req->nChannelsMax,
                     alone);
    tune_table_min(alone, (const int(*)[NCCL_NUM_PROTOCOLS])allowed, &modelAlgo, &modelProto);
  }

  size_t chunk = req->chunkSize;
  if (ctx->tuner && ctx->tuner->getChunkSize) {
    size_t c = chunk;
    if (ctx->tuner->getChunkSize(ctx->tunerCtx, (ncclFunc_t)req->func, req->bytes, algo, proto, nc, &c) ==
            ncclSuccess && c > 0)
      chunk = c;
  }
  out->algo = algo;
  out->proto = proto;
  out->nChannels = nc;
  out->chunkSize = chunk;
  out->predictedUs = model[algo][proto];
  out->byTuner = ctx->tuner && (algo != modelAlgo || proto != modelProto || nc != modelNc || chunk != req->chunkSize);
  MK_TRACE(NCCL_TUNING, "TUNER: %s %zu bytes: %s/%s %d channels chunk %zu, %.1f us%s", costmodel_func_name(req->func),
           req->bytes, costmodel_algo_name(algo), costmodel_proto_name(proto), nc, chunk, (double)out->predictedUs,
           out->byTuner ? " (tuner plugin)" : "");
  if (!ctx->tuner) {
    ctx->last.req = *req;
    memcpy(ctx->last.supported, supported, sizeof(ctx->last.supported));
    ctx->last.out = *out;
    ctx->last.valid = 1;
  }
  return ncclSuccess;
}

ncclResult_t tune_decide(tune_ctx_t* ctx, int func, size_t bytes, int nChannelsMax,
                         const int supported[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS], tune_choice_t* out) {
  tune_request_t req = {func, bytes, nChannelsMax, 1, 0, 0, supported};
  return tune_decide_request(ctx, &req, out);
}
