/* Collective -> algorithm, protocol, channels and chunk size: the tuning
 * context decides among the entries of plan_runnable (what the executors
 * run); the planner then lays the collective out for that choice. A new
 * algorithm is one more entry here plus its layout in the planner; the
 * tuner's picks of anything else are skipped (tune.c logs that once). */
#include "plan/plan_tune.h"

#include <string.h>

#include "base/err.h"
#include "comm/comm.h"
#include "device/common/shape.h"
#include "device/common/work.h"
#include "device/host/host_types.h"
#include "tune/tune.h"

typedef struct {
  int algo, proto;
} plan_runnable_t;

/* Host threads and GPU kernels run the same set. */
static const plan_runnable_t plan_runnable[] = {
    {MK_ALGO_RING, MK_PROTO_SIMPLE},
};

static void plan_supported(int supported[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS]) {
  memset(supported, 0, sizeof(int) * NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS);
  for (size_t i = 0; i < sizeof(plan_runnable) / sizeof(plan_runnable[0]); i++)
    supported[plan_runnable[i].algo][plan_runnable[i].proto] = 1;
}

/* NCCL's nBytes: AllGather and ReduceScatter count the whole buffer. */
static size_t plan_tune_bytes(const struct ncclComm* comm, const plan_task_t* t) {
  size_t b = t->count * host_type_size(t->type);
  return t->coll == MK_COLL_ALLGATHER || t->coll == MK_COLL_REDUCESCATTER ? b * (size_t)comm->nRanks : b;
}

/* A chunk holds whole 16-byte element groups (vector loads) and fits its steps. */
static int64_t plan_chunk_clamp(size_t want, int64_t max, size_t typeSize) {
  int64_t unit = mk_elem_align((int)typeSize) * (int64_t)typeSize;
  int64_t c = want > (size_t)max ? max : (int64_t)want;
  c = c / unit * unit;
  return c < unit ? unit : c;
}

ncclResult_t plan_tune_coll(struct ncclComm* comm, const plan_task_t* t, int numPipeOps, int64_t chunkBytesMax,
                            int defaultChannels, plan_choice_t* out) {
  int supported[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  plan_supported(supported);
  int func = tune_func_of_mk_coll(t->coll);
  if (func < 0) return MK_FAIL(ncclInternalError, "plan: collective %d has no tuner function", t->coll);
  tune_request_t req = {func, plan_tune_bytes(comm, t), comm->dp.nChannels, numPipeOps, 0, (size_t)chunkBytesMax,
                        (const int(*)[NCCL_NUM_PROTOCOLS])supported};
  tune_choice_t c;
  MK_CHECK(tune_decide_request(comm->tune, &req, &c));
  out->algo = c.algo;
  out->proto = c.proto;
  out->nChannels = tune_ctx_tuner(comm->tune) ? c.nChannels : defaultChannels;
  if (out->nChannels < 1) out->nChannels = 1;
  if (out->nChannels > comm->dp.nChannels) out->nChannels = comm->dp.nChannels;
  out->chunkBytes = plan_chunk_clamp(c.chunkSize, chunkBytesMax, host_type_size(t->type));
  return ncclSuccess;
}
