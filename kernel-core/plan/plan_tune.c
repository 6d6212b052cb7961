/* Collective -> algorithm, protocol, channels and chunk size: the tuning
 * context decides among what the executors run (plan_tune_supported); the
 * planner then lays the collective out for that choice. A new algorithm is
 * one more supported cell here plus its layout in the planner; the tuner's
 * picks of anything else are skipped (tune.c logs that once). */
#include "plan/plan_tune.h"

#include <string.h>

#include "base/err.h"
#include "base/log.h"
#include "collnet/collnet.h"
#include "comm/comm.h"
#include "device/common/sched_flat.h"
#include "device/common/shape.h"
#include "device/common/work.h"
#include "base/dtype.h"
#include "tune/tune.h"

/* What the executors run: both run rings in Simple and trees (AllReduce,
 * Broadcast, Reduce) in Simple; the GPU one also rings in LL where every
 * ring connection of every rank has LL lines (dp.ch.ringLL: their
 * transports offered them); the host one CollNetDirect in Simple for an
 * AllReduce of a type and op (< 0: any) the communicator's collnet reduces. */
static void plan_tune_supported(const struct ncclComm* comm, int coll, int type, int op,
                                int supported[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS]) {
  memset(supported, 0, sizeof(int) * NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS);
  if (coll == MK_COLL_ALLREDUCE && collnet_comm_reduces(comm, type, op))
    supported[NCCL_ALGO_COLLNET_DIRECT][NCCL_PROTO_SIMPLE] = 1;
  supported[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] = 1;
  if (comm->cudaDev >= 0 && comm->dp.ch.ringLL) supported[NCCL_ALGO_RING][NCCL_PROTO_LL] = 1;
  if (coll == MK_COLL_ALLREDUCE || coll == MK_COLL_BROADCAST || coll == MK_COLL_REDUCE)
    supported[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE] = 1;
}

/* NCCL's nBytes: AllGather and ReduceScatter count the whole buffer. */
static size_t plan_tune_bytes(const struct ncclComm* comm, const task_t* t) {
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

/* What a chunk of `algo` and `proto` holds: its steps of the connection
 * buffer (LL: the data half of one step's lines). */
static int64_t plan_chunk_max(const struct ncclComm* comm, int coll, int algo, int proto) {
  if (proto == MK_PROTO_LL) return comm->dp.ch.llBuffSize / MKCCL_STEPS / 2;
  int chunkSteps, sliceSteps;
  mk_coll_shape(coll, algo, &chunkSteps, &sliceSteps);
  return (int64_t)chunkSteps * (comm->dp.ch.buffSize / MKCCL_STEPS);
}

/* The tuner is offered the ring's chunk (the planner's default); the answer
 * is then held to what the chosen algorithm's chunk holds. */
static ncclResult_t plan_tune_decide(struct ncclComm* comm, int coll, int type, int op, size_t bytes, int numPipeOps,
                                     tune_choice_t* c) {
  int supported[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  plan_tune_supported(comm, coll, type, op, supported);
  int func = tune_func_of_mk_coll(coll);
  if (func < 0) return MK_FAIL(ncclInternalError, "plan: collective %d has no tuner function", coll);
  tune_request_t req = {func, bytes, comm->dp.ch.nChannels, numPipeOps, 0,
                        (size_t)plan_chunk_max(comm, coll, MK_ALGO_RING, MK_PROTO_SIMPLE), (const int(*)[NCCL_NUM_PROTOCOLS])supported};
  MK_CHECK(tune_decide_request(comm->tune, &req, c));
  MK_INFO(NCCL_TUNING, "%s: %zu Bytes -> Algo %s proto %s, predicted %.1f us (rank %d, opCount %llu)",
          costmodel_func_name(func), bytes, costmodel_algo_name(c->algo), costmodel_proto_name(c->proto),
          (double)c->predictedUs, comm->rank, (unsigned long long)comm->dp.opCount);
  return ncclSuccess;
}

/* FLAT: a small host AllReduce takes one step instead of the ring's 2(N-1)
 * or the tree's 2 log N, which is what latency is made of when ranks share
 * cores. No NCCL algorithm, so neither the model nor a tuner plugin can
 * weigh it: it is left out whenever a tuner plugin, NCCL_ALGO or NCCL_PROTO
 * decides (dp.par.flatMaxBytes is 0 then). */
static int plan_flat_fits(struct ncclComm* comm, const task_t* t) {
  size_t bytes = t->count * host_type_size(t->type);
  /* GPUs: one step of LL lines (half of them data), and only where every
   * pair has lines (channel_connect_flat agrees on it when it connects). */
  size_t step = comm->cudaDev >= 0 ? (size_t)(comm->dp.ch.llBuffSize / MKCCL_STEPS / 2)
                                   : (size_t)(comm->dp.ch.buffSize / MKCCL_STEPS);
  return t->coll == MK_COLL_ALLREDUCE && comm->nRanks >= 2 && comm->nRanks <= MK_FLAT_MAX_RANKS &&
         (int64_t)bytes <= comm->dp.par.flatMaxBytes && bytes <= step && !tune_ctx_tuner(comm->tune) &&
         (comm->cudaDev < 0 || !comm->dp.ch.flatConnected || comm->dp.ch.flatLL);
}

/* LL on GPU rings: each channel moves one step of lines per hop, so small
 * collectives spread over channels of MKCCL_GPU_LL_CHANNEL_BYTES each. */
static int plan_ll_channels(const struct ncclComm* comm, size_t bytes) {
  int64_t per = comm->dp.par.gpuLLChannelBytes > 0 ? comm->dp.par.gpuLLChannelBytes : (int64_t)bytes + 1;
  int64_t want = ((int64_t)bytes + per - 1) / per;
  if (want < 1) want = 1;
  return want < comm->dp.ch.nChannels ? (int)want : comm->dp.ch.nChannels;
}

/* Up to MKCCL_GPU_LL_MAX_BYTES a GPU ring runs LL (Simple pays a system
 * fence and three block barriers per slice, LL one store per hop). Like FLAT, left out where a
 * tuner plugin, NCCL_ALGO or NCCL_PROTO decides; gpuLLMaxBytes is 0 then,
 * and on host ranks and rings without LL lines (dp_read_plan_params). */
static int plan_gpu_ll_fits(struct ncclComm* comm, size_t bytes) {
  return (int64_t)bytes <= comm->dp.par.gpuLLMaxBytes && !tune_ctx_tuner(comm->tune);
}

/* A chain moves each chunk one hop at a time: a tree's levels (up and down
 * for AllReduce), a ring Broadcast's or Reduce's N-1 hops. With one chunk
 * per channel no hop overlaps another, so the chunk is halved until each channel
 * has two chunks per hop, down to a floor that keeps a step's fixed cost
 * small against its copy (host: a few us at several GB/s; GPU: fences). */
static int64_t plan_chain_chunk(const struct ncclComm* comm, const task_t* t, const task_choice_t* c,
                                int64_t chunk) {
  int N = comm->nRanks, hops;
  if (c->algo == MK_ALGO_TREE) {
    int depth = 0;
    while ((1 << depth) < N) depth++;
    hops = t->coll == MK_COLL_ALLREDUCE ? 2 * depth : depth;
  } else if (c->algo == MK_ALGO_RING && comm->cudaDev < 0 &&
             (t->coll == MK_COLL_BROADCAST || t->coll == MK_COLL_REDUCE)) {
    hops = N - 1;
  } else {
    return chunk;
  }
  int64_t floor = comm->cudaDev >= 0 ? (64 << 10) : (16 << 10);
  int64_t perChannel = (int64_t)(t->count * host_type_size(t->type)) / (c->nChannels > 0 ? c->nChannels : 1);
  while (chunk / 2 >= floor && perChannel / chunk < 2 * hops) chunk /= 2;
  return chunk;
}

/* Over the network each hop costs a round of thread hand-offs on both
 * ends, so a host AllReduce among a few ranks runs FLAT well past one step:
 * direct above a chunk (device/common/coll_flat.h), on channel 0 (whose
 * FLAT connections channel_connect_flat makes). */
static int plan_net_flat_fits(struct ncclComm* comm, const task_t* t) {
  size_t bytes = t->count * host_type_size(t->type);
  int maxRanks = comm->dp.par.netFlatMaxRanks < MK_FLAT_MAX_RANKS ? comm->dp.par.netFlatMaxRanks : MK_FLAT_MAX_RANKS;
  return t->coll == MK_COLL_ALLREDUCE && comm->cudaDev < 0 && comm->nRanks >= 3 && comm->nRanks <= maxRanks &&
         (int64_t)bytes <= comm->dp.par.netFlatMaxBytes && comm->dp.par.netFlatChunk > 0 && !tune_ctx_tuner(comm->tune);
}

int plan_tune_flat(struct ncclComm* comm, const task_t* t, task_choice_t* out) {
  if (!plan_flat_fits(comm, t)) {
    if (!plan_net_flat_fits(comm, t)) return 0;
    int64_t step = comm->dp.ch.buffSize / MKCCL_STEPS;
    int64_t chunk = comm->dp.par.netFlatChunk < step ? comm->dp.par.netFlatChunk : step;
    size_t ts = host_type_size(t->type);
    *out = (task_choice_t){MK_ALGO_FLAT, MK_PROTO_SIMPLE, 1, plan_chunk_clamp((size_t)chunk, step, ts), -1.0f};
    MK_INFO(NCCL_TUNING, "allreduce: %zu Bytes -> Algo flat (%s, chunk %lld) proto simple (MKCCL_NET_FLAT_MAX_BYTES %lld; rank %d, opCount %llu)",
            t->count * ts, mk_flat_direct((int64_t)(t->count * ts), out->chunkBytes) ? "direct" : "one step",
            (long long)out->chunkBytes, (long long)comm->dp.par.netFlatMaxBytes, comm->rank,
            (unsigned long long)comm->dp.opCount);
    return 1;
  }
  int gpu = comm->cudaDev >= 0;
  *out = (task_choice_t){MK_ALGO_FLAT, gpu ? MK_PROTO_LL : MK_PROTO_SIMPLE, 1, comm->dp.ch.buffSize / MKCCL_STEPS, -1.0f};
  MK_INFO(NCCL_TUNING, "allreduce: %zu Bytes -> Algo flat proto %s (MKCCL_%sFLAT_MAX_BYTES %lld; rank %d, opCount %llu)",
          t->count * host_type_size(t->type), gpu ? "ll" : "simple", gpu ? "GPU_" : "", (long long)comm->dp.par.flatMaxBytes,
          comm->rank, (unsigned long long)comm->dp.opCount);
  return 1;
}

ncclResult_t plan_tune_coll(struct ncclComm* comm, const task_t* t, int numPipeOps, int defaultChannels,
                            task_choice_t* out) {
  if (plan_tune_flat(comm, t, out)) return ncclSuccess;
  size_t bytes = plan_tune_bytes(comm, t);
  if (plan_gpu_ll_fits(comm, bytes)) {
    int64_t chunk = plan_chunk_max(comm, t->coll, MK_ALGO_RING, MK_PROTO_LL);
    *out = (task_choice_t){MK_ALGO_RING, MK_PROTO_LL, plan_ll_channels(comm, bytes),
                           plan_chunk_clamp((size_t)chunk, chunk, host_type_size(t->type)), -1.0f};
    MK_INFO(NCCL_TUNING, "%s: %zu Bytes -> Algo ring proto ll, %d channel(s) (MKCCL_GPU_LL_MAX_BYTES %lld; rank %d, opCount %llu)",
            costmodel_func_name(tune_func_of_mk_coll(t->coll)), bytes, out->nChannels,
            (long long)comm->dp.par.gpuLLMaxBytes, comm->rank, (unsigned long long)comm->dp.opCount);
    return ncclSuccess;
  }
  tune_choice_t c;
  MK_CHECK(plan_tune_decide(comm, t->coll, (int)t->type, t->op, bytes, numPipeOps, &c));
  out->algo = c.algo;
  out->proto = c.proto;
  out->nChannels = tune_ctx_tuner(comm->tune) ? c.nChannels
                   : comm->cudaDev >= 0 && c.proto == MK_PROTO_LL ? plan_ll_channels(comm, bytes)
                                                                  : defaultChannels;
  if (out->nChannels < 1) out->nChannels = 1;
  if (out->nChannels > comm->dp.ch.nChannels) out->nChannels = comm->dp.ch.nChannels;
  /* CollNet's connections exist on its own channels only. */
  if (c.algo == MK_ALGO_COLLNET_DIRECT && out->nChannels > collnet_comm_channels(comm))
    out->nChannels = collnet_comm_channels(comm);
  int64_t chunk = plan_chunk_clamp(c.chunkSize, plan_chunk_max(comm, t->coll, c.algo, c.proto), host_type_size(t->type));
  /* A tuner plugin's chunk is its own business. */
  if (c.proto == MK_PROTO_SIMPLE && !tune_ctx_tuner(comm->tune)) chunk = plan_chain_chunk(comm, t, out, chunk);
  out->chunkBytes = plan_chunk_clamp((size_t)chunk, chunk, host_type_size(t->type));
  out->predictedUs = c.predictedUs;
  return ncclSuccess;
}

ncclResult_t plan_tune_predict(struct ncclComm* comm, const task_t* t, int numPipeOps, float* us) {
  tune_choice_t c;
  MK_CHECK(plan_tune_decide(comm, t->coll, (int)t->type, t->op, plan_tune_bytes(comm, t), numPipeOps, &c));
  *us = c.predictedUs;
  return ncclSuccess;
}

ncclResult_t plan_tune_pick(struct ncclComm* comm, int coll, size_t bytes, int* algo, int* proto) {
  tune_choice_t c;
  MK_CHECK(plan_tune_decide(comm, coll, -1, -1, bytes, 1, &c));
  *algo = c.algo;
  *proto = c.proto;
  return ncclSuccess;
}
