/* Tuning: which algorithm, protocol, channel count and chunk size a
 * collective uses, and what it is predicted to cost.
 *
 * One tune_ctx_t per communicator, created at init from a topology summary
 * (costmodel_topo_t, common/costmodel; the integrator fills it from
 * kernel-core/topo) and the process's tuner plugin, if any
 * (tune_plugin_acquire). The planner calls tune_decide for every collective
 * at group end, before it splits the data into chunks; point-to-point
 * operations are not tuned.
 *
 * How a decision is made:
 *  1. The built-in cost model fills the cost table (microseconds, -1 where
 *     the model has no such algorithm/protocol) for the model's channel count.
 *  2. Entries the user excluded with NCCL_ALGO / NCCL_PROTO become -1.
 *  3. The tuner plugin (any ABI v2..v6, adapted to v6) may edit the table
 *     and the channel count; a failing plugin call keeps the model's table.
 *  4. The lowest entry >= 0 wins among those the executors support (the
 *     caller's `supported`) and the user allows. If the overall lowest entry
 *     names an algorithm the executors lack, it is skipped and logged once
 *     per communicator and algorithm.
 *  5. The plugin's getChunkSize (v6) may change the caller's chunk size.
 * The user's NCCL_ALGO / NCCL_PROTO win over the plugin. */
#ifndef MKCCL_TUNE_TUNE_H
#define MKCCL_TUNE_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "costmodel/costmodel.h"
#include "costmodel/costmodel_names.h"
#include "nccl.h"
#include "tune/tune_filter.h"
#include "tuner/nccl_tuner.h"

typedef struct tune_ctx tune_ctx_t;

typedef struct {
  int algo;           /* NCCL_ALGO_* */
  int proto;          /* NCCL_PROTO_* */
  int nChannels;      /* within [1, nChannelsMax] */
  size_t chunkSize;   /* the caller's, or the plugin's (clamp it to the buffers) */
  float predictedUs;  /* the model's time for this choice, -1 if the model has none */
  int byTuner;        /* 1 when the plugin changed what the model alone picks */
} tune_choice_t;

typedef struct {
  int func;           /* ncclFunc_t */
  size_t bytes;       /* NCCL's nBytes: count*size; AllGather/ReduceScatter: the total (count*size*nRanks) */
  int nChannelsMax;   /* channels the communicator has */
  int numPipeOps;     /* collectives in the same group (1 when alone) */
  int regBuff;        /* 1 when the user buffers are registered */
  size_t chunkSize;   /* the planner's chunk size for this collective (0: none) */
  /* supported[a][p] != 0: the executors run algorithm a with protocol p.
   * NULL: tune_supported_default(). */
  const int (*supported)[NCCL_NUM_PROTOCOLS];
} tune_request_t;

/* Everything the model knows: ring and tree with LL and Simple, LL128 too on a GPU. */
void tune_supported_default(int gpu, int supported[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS]);

/* tuner may be NULL (model only); it stays owned by the caller and must
 * outlive the context. Reads NCCL_ALGO and NCCL_PROTO: a malformed value is
 * ncclInvalidUsage. A plugin whose init fails is logged and not used. */
ncclResult_t tune_ctx_create(const costmodel_topo_t* topo, const ncclTuner_v6_t* tuner, uint64_t commId,
                             tune_ctx_t** out);
/* Calls the plugin's finalize. NULL is fine. */
void tune_ctx_destroy(tune_ctx_t* ctx);

/* The decision for one collective (thread-compatible: one caller per
 * context at a time). ncclInvalidArgument for a bad request;
 * ncclInvalidUsage when nothing the executors support is allowed. */
ncclResult_t tune_decide_request(tune_ctx_t* ctx, const tune_request_t* req, tune_choice_t* out);

/* The same with numPipeOps 1, no registration and no chunk size. */
ncclResult_t tune_decide(tune_ctx_t* ctx, int func, size_t bytes, int nChannelsMax,
                         const int supported[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS], tune_choice_t* out);

/* The table of step 2..3 (what the plugin left), for tools. */
ncclResult_t tune_table(tune_ctx_t* ctx, const tune_request_t* req,
                        float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS], int* nChannels);

/* The plugin in use by this context, NULL when none (or its init failed). */
const ncclTuner_v6_t* tune_ctx_tuner(const tune_ctx_t* ctx);

/* The process's tuner plugin (NCCL_TUNER_PLUGIN, then the manifests),
 * loaded by the first acquire and closed by the last release; *tuner NULL
 * when none loads. */
ncclResult_t tune_plugin_acquire(const ncclTuner_v6_t** tuner);
void tune_plugin_release(void);

/* One tuner library loaded through the loader's selection, independent of
 * the process's (tools compare two). NULL when none loads. */
typedef struct tune_plugin tune_plugin_t;
ncclResult_t tune_plugin_load(tune_plugin_t** out);
const ncclTuner_v6_t* tune_plugin_table(const tune_plugin_t* p);
int tune_plugin_abi(const tune_plugin_t* p);
void tune_plugin_unload(tune_plugin_t* p);

/* MK_COLL_* (device/common/work.h) -> ncclFunc_t; -1 for none. */
int tune_func_of_mk_coll(int mkColl);

#endif
