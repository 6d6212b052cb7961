/* tuner-example: a tuner plugin that picks the algorithm and protocol of
 * AllReduce by size: Ring/Simple from TUNER_EXAMPLE_THRESHOLD bytes on
 * (bandwidth), TUNER_EXAMPLE_SMALL below (latency: Tree/Simple by default,
 * which mkccl's host and GPU executors both run; tree/ll or ring/ll suit
 * NCCL on GPUs). Every other collective, and every choice the table
 * disables, is left to the core.
 *
 * How a tuner works (NCCL tuner ABI v5/v6):
 * - init() is called once per communicator with its size, the NVLink domain
 *   shape and the core's tuning constants; it returns a context.
 * - getCollInfo() is called for each collective with a cost table,
 *   float[numAlgo][numProto] of microseconds, filled by the core's own model.
 *   The cheapest entry >= 0 wins; NCCL_ALGO_PROTO_IGNORE (-1) marks a
 *   combination that is disabled (by NCCL_ALGO/NCCL_PROTO or the hardware).
 *   A tuner edits the table: writing 0 to an entry forces it.
 * - v6 adds getChunkSize() (optional, NULL here).
 * - finalize() frees the context.
 * mkccl may still skip the winner when its executors lack it (mkccl logs
 * "TUNER: X/Y is preferred ... skipped") and take the next cheapest.
 *
 * Exports ncclTunerPlugin_v6 (mkccl's own version), ncclTunerPlugin_v5 (the
 * newest NCCL 2.28 loads; same calls but getChunkSize) and
 * mkcclPluginInfo_v1 (the parameter table, for mkccl). */
#define _POSIX_C_SOURCE 200809L /* strcasecmp */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mkccl_plugin_params.h"
#include "tuner/nccl_tuner.h"

#define TE_EXPORT __attribute__((visibility("default")))

/* ---- parameters ----
 * The table from tuner_example_params.def, then the typed accessors. Under
 * mkccl the core answers (environment over manifest options over the
 * default); hosted by NCCL, the environment does. */
static const mkcclParamDecl_v1 te_params[] = {
#define PLUGIN_PARAM PLUGIN_PARAM_DECL
#include "tuner_example_params.def"
#undef PLUGIN_PARAM
};
#define TE_NPARAMS (int)(sizeof(te_params) / sizeof(te_params[0]))
static plugin_params_t te_pp = {NULL, te_params, TE_NPARAMS};
#define PLUGIN_PARAM(name, type, def, help) static PLUGIN_PARAM_DEFINE(tuner_example_param_, &te_pp, name, type)
#include "tuner_example_params.def"
#undef PLUGIN_PARAM

/* The core binds its services before init; NCCL never calls this. */
static void te_bind(const mkcclServices_v1* services) { te_pp.services = services; }

TE_EXPORT const mkcclPluginInfo_v1_t mkcclPluginInfo_v1 = {
    sizeof(mkcclPluginInfo_v1_t), MKCCL_PLUGIN_ABI_VERSION, "tuner-example", "1.0", te_params, TE_NPARAMS, te_bind};

/* ---- the context of one communicator ---- */
typedef struct {
  ncclDebugLogger_t log;
  size_t threshold; /* bytes */
  int smallAlgo, smallProto;
  int logged[2]; /* the first small and the first large choice are logged */
} te_ctx_t;

#define TE_LOG(ctx, flags, ...) \
  do {                          \
    if ((ctx)->log) (ctx)->log(NCCL_LOG_INFO, flags, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

static const char* te_algo_name(int a) { return a == NCCL_ALGO_TREE ? "Tree" : a == NCCL_ALGO_RING ? "Ring" : "?"; }
static const char* te_proto_name(int p) { return p == NCCL_PROTO_LL ? "LL" : p == NCCL_PROTO_SIMPLE ? "Simple" : "?"; }

/* "tree/ll" -> NCCL_ALGO_TREE, NCCL_PROTO_LL; 0 on success. */
static int te_parse_choice(const char* text, int* algo, int* proto) {
  const char* slash = strchr(text, '/');
  if (!slash) return -1;
  size_t n = (size_t)(slash - text);
  if (n == 4 && strncasecmp(text, "tree", 4) == 0) *algo = NCCL_ALGO_TREE;
  else if (n == 4 && strncasecmp(text, "ring", 4) == 0) *algo = NCCL_ALGO_RING;
  else return -1;
  if (strcasecmp(slash + 1, "ll") == 0) *proto = NCCL_PROTO_LL;
  else if (strcasecmp(slash + 1, "simple") == 0) *proto = NCCL_PROTO_SIMPLE;
  else return -1;
  return 0;
}

static ncclResult_t te_init(void** context, uint64_t commId, size_t nRanks, size_t nNodes, ncclDebugLogger_t log,
                            ncclNvlDomainInfo_v5_t* nvl, ncclTunerConstants_v5_t* constants) {
  (void)commId, (void)nvl, (void)constants; /* a tuner may read, and change, the constants here */
  te_ctx_t* ctx = calloc(1, sizeof(*ctx));
  if (!ctx) return ncclSystemError;
  ctx->log = log;
  int64_t threshold = tuner_example_param_TUNER_EXAMPLE_THRESHOLD();
  const char* small = tuner_example_param_TUNER_EXAMPLE_SMALL();
  if (threshold < 0 || te_parse_choice(small, &ctx->smallAlgo, &ctx->smallProto) != 0) {
    if (log)
      log(NCCL_LOG_WARN, NCCL_TUNING, __FILE__, __LINE__,
          "TUNER/tuner-example: TUNER_EXAMPLE_THRESHOLD=%lld TUNER_EXAMPLE_SMALL='%s': want bytes >= 0 and "
          "tree/ll, tree/simple, ring/ll or ring/simple", (long long)threshold, small);
    free(ctx);
    return ncclInvalidArgument; /* the core tunes without this plugin */
  }
  ctx->threshold = (size_t)threshold;
  TE_LOG(ctx, NCCL_INIT | NCCL_TUNING,
         "TUNER/tuner-example: %zu ranks, %zu nodes: AllReduce below %zu bytes %s/%s, from %zu bytes Ring/Simple",
         nRanks, nNodes, ctx->threshold, te_algo_name(ctx->smallAlgo), te_proto_name(ctx->smallProto), ctx->threshold);
  *context = ctx;
  return ncclSuccess;
}

static ncclResult_t te_get_coll_info(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                     float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels) {
  (void)numPipeOps, (void)regBuff;
  (void)nChannels; /* left as the core set it; a tuner may set a channel count here */
  te_ctx_t* ctx = context;
  if (collType != ncclFuncAllReduce) return ncclSuccess; /* the core's own choice */
  int large = nBytes >= ctx->threshold;
  int algo = large ? NCCL_ALGO_RING : ctx->smallAlgo;
  int proto = large ? NCCL_PROTO_SIMPLE : ctx->smallProto;
  if (algo >= numAlgo || proto >= numProto) return ncclSuccess; /* a table without that cell */
  /* The table is contiguous float[numAlgo][numProto], passed as float**. */
  float* cell = (float*)collCostTable + algo * numProto + proto;
  if (*cell == (float)NCCL_ALGO_PROTO_IGNORE) return ncclSuccess; /* disabled: respect it */
  *cell = 0.0f; /* the cheapest entry wins: 0 forces this one */
  if (!ctx->logged[large]) {
    ctx->logged[large] = 1;
    TE_LOG(ctx, NCCL_TUNING, "TUNER/tuner-example: AllReduce %zu bytes: %s/%s", nBytes, te_algo_name(algo),
           te_proto_name(proto));
  }
  return ncclSuccess;
}

static ncclResult_t te_finalize(void* context) {
  free(context);
  return ncclSuccess;
}

/* v6 = v5 + getChunkSize (optional: NULL keeps the core's chunk size). The
 * v5 and v6 init types are the same (typedefs), so the functions are shared. */
TE_EXPORT const ncclTuner_v6_t ncclTunerPlugin_v6 = {
    .name = "tuner-example",
    .init = te_init,
    .getCollInfo = te_get_coll_info,
    .finalize = te_finalize,
    .getChunkSize = NULL,
};

TE_EXPORT const ncclTuner_v5_t ncclTunerPlugin_v5 = {
    .name = "tuner-example",
    .init = te_init,
    .getCollInfo = te_get_coll_info,
    .finalize = te_finalize,
};
