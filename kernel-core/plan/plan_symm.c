/* Symmetric kernels' selection: the rules (plan_symm_pick) apart from
 * where their inputs come from (plan_symm_choose), so that tests can ask
 * about any buffer layout without a GPU. */
#include "plan/plan_symm.h"

#include "base/dtype.h"
#include "base/err.h"
#include "base/log.h"
#include "comm/comm.h"
#include "device/common/symm.h"
#include "tune/tune.h"

/* The element types and ops the symmetric kernels are built for
 * (device/cuda/symm.cuh); Avg is PREMULSUM (floating) or SUMPOSTDIV
 * (integer), and a PREMULSUM whose operand may differ between ranks cannot
 * run where one rank reduces the others' raw inputs. */
static int symm_type_ok(int type) {
  switch (type) {
    case ncclInt32: case ncclUint32: case ncclInt64: case ncclUint64:
    case ncclFloat16: case ncclFloat32: case ncclFloat64: case ncclBfloat16: return 1;
    default: return 0;
  }
}

static int symm_is_float(int type) {
  return type == ncclFloat16 || type == ncclFloat32 || type == ncclFloat64 || type == ncclBfloat16;
}

static const char* symm_op_why(const plan_symm_query_t* q) {
  if (q->coll == MK_COLL_ALLGATHER) return NULL;
  switch (q->op) {
    case MK_OP_SUM: case MK_OP_PROD: case MK_OP_MAX: case MK_OP_MIN: return NULL;
    case MK_OP_PREMULSUM:
      if (!symm_is_float(q->type)) return "PreMulSum of an integer type";
      return q->opUniform && !q->scalarPtr ? NULL : "a PreMulSum operator (its operand may differ between ranks)";
    case MK_OP_SUMPOSTDIV: return symm_is_float(q->type) ? "a divided sum of a floating type" : NULL;
    default: return "the reduction operator";
  }
}

static int64_t symm_delta(const api_window_span_t* s) {
  return (int64_t)((intptr_t)s->flatBase - (intptr_t)s->userPtr);
}

/* Overlapping buffers run only in NCCL's in-place layouts: the kernels
 * write outputs other ranks may still read as inputs otherwise. */
static int symm_layout_ok(const plan_symm_query_t* q, size_t sendBytes, size_t recvBytes, size_t part) {
  const char* s = q->sendbuff;
  const char* r = q->recvbuff;
  if (s + sendBytes <= r || r + recvBytes <= s) return 1;
  switch (q->coll) {
    case MK_COLL_ALLREDUCE: return s == r;
    case MK_COLL_ALLGATHER: return s == r + (size_t)q->rank * part;
    default: return r == s + (size_t)q->rank * part;
  }
}

int plan_symm_pick(const plan_symm_query_t* q, plan_symm_t* out, const char** why) {
  size_t ts = (size_t)mk_type_size(q->type);
  size_t part = q->count * ts;
  size_t bytes = q->coll == MK_COLL_ALLREDUCE ? part : part * (size_t)q->nRanks;
  size_t sendBytes = q->coll == MK_COLL_REDUCESCATTER ? bytes : part;
  size_t recvBytes = q->coll == MK_COLL_ALLGATHER ? bytes : part;
  const char* no = NULL;
  const char* op = symm_op_why(q);
  if (q->maxBytes <= 0) no = "off (MKCCL_SYMM_MAX_BYTES 0, or NCCL_ALGO/NCCL_PROTO set)";
  else if (q->tuner) no = "a tuner plugin decides";
  else if (q->coll != MK_COLL_ALLREDUCE && q->coll != MK_COLL_ALLGATHER && q->coll != MK_COLL_REDUCESCATTER)
    no = "not AllReduce, AllGather or ReduceScatter";
  else if (q->nRanks < 2 || !q->haveRes) no = "no symmetric resources (no symmetric window, or the ranks are not one LSA team)";
  else if (!symm_type_ok(q->type)) no = "the element type";
  else if (op) no = op;
  else if (part == 0) no = "no elements";
  else if (bytes > (size_t)q->maxBytes) no = "larger than MKCCL_SYMM_MAX_BYTES";
  else if (!q->haveSend) no = "the send buffer is not inside one symmetric window";
  else if (!q->haveRecv) no = "the receive buffer is not inside one symmetric window";
  else if (!symm_layout_ok(q, sendBytes, recvBytes, part)) no = "the buffers overlap without being in place";
  if (no) {
    *why = no;
    return 0;
  }
  int64_t per = q->channelBytes > 0 ? q->channelBytes : (int64_t)bytes;
  int64_t nch = ((int64_t)bytes + per - 1) / per;
  int maxCh = q->maxChannels < MK_SYMM_CHANNELS ? q->maxChannels : MK_SYMM_CHANNELS;
  if (nch > maxCh) nch = maxCh;
  if (nch < 1) nch = 1;
  *out = (plan_symm_t){q->coll == MK_COLL_ALLREDUCE && (int64_t)bytes <= q->oneShotMaxBytes, (int)nch, bytes,
                       symm_delta(&q->send), symm_delta(&q->recv), q->send.stride, q->recv.stride,
                       q->res.flatBase, q->res.stride};
  return 1;
}

/* The query for t, with the windows its buffers lie in. */
static void symm_query(struct ncclComm* comm, const task_t* t, plan_symm_query_t* q) {
  *q = (plan_symm_query_t){.coll = t->coll, .type = (int)t->type, .op = t->op, .opUniform = t->opUniform,
                           .scalarPtr = t->scalarPtr, .count = t->count, .rank = comm->rank,
                           .nRanks = comm->nRanks, .maxChannels = comm->dp.ch.nChannels,
                           .tuner = tune_ctx_tuner(comm->tune) != NULL, .maxBytes = comm->dp.par.symmMaxBytes,
                           .oneShotMaxBytes = comm->dp.par.symmOneShotMaxBytes,
                           .channelBytes = comm->dp.par.symmChannelBytes, .sendbuff = t->sendbuff,
                           .recvbuff = t->recvbuff};
  size_t part = t->count * host_type_size(t->type);
  size_t all = part * (size_t)comm->nRanks;
  q->haveRes = api_window_symm_res(comm, &q->res);
  q->haveSend = api_window_symm_find(comm, t->sendbuff, t->coll == MK_COLL_REDUCESCATTER ? all : part, &q->send);
  q->haveRecv = api_window_symm_find(comm, t->recvbuff, t->coll == MK_COLL_ALLGATHER ? all : part, &q->recv);
}

int plan_symm_choose(struct ncclComm* comm, const task_t* t, task_choice_t* choice) {
  /* Most communicators never register a symmetric window: nothing to look up. */
  if (!comm->symmRes || comm->dp.par.symmMaxBytes <= 0 || t->kind != TASK_COLL) return 0;
  if (t->coll != MK_COLL_ALLREDUCE && t->coll != MK_COLL_ALLGATHER && t->coll != MK_COLL_REDUCESCATTER) return 0;
  plan_symm_query_t q;
  plan_symm_t s;
  const char* why = NULL;
  symm_query(comm, t, &q);
  const char* name = costmodel_func_name(tune_func_of_mk_coll(t->coll));
  if (!plan_symm_pick(&q, &s, &why)) {
    MK_INFO(NCCL_TUNING, "%s: %zu elements: no symmetric kernel: %s (rank %d, opCount %llu)", name, t->count, why,
            comm->rank, (unsigned long long)comm->dp.opCount);
    return 0;
  }
  *choice = (task_choice_t){MK_ALGO_SYMM, MK_PROTO_SIMPLE, s.nChannels, (int64_t)s.bytes, -1.0f};
  MK_INFO(NCCL_TUNING, "%s: %zu Bytes -> Algo symmetric%s, %d channel(s) (MKCCL_SYMM_MAX_BYTES %lld; rank %d, opCount %llu)",
          name, s.bytes, t->coll != MK_COLL_ALLREDUCE ? "" : s.oneShot ? " one-shot" : " two-shot", s.nChannels,
          (long long)comm->dp.par.symmMaxBytes, comm->rank, (unsigned long long)comm->dp.opCount);
  return 1;
}

ncclResult_t plan_symm_work(struct ncclComm* comm, const task_t* t, mk_work_t* w) {
  plan_symm_query_t q;
  plan_symm_t s;
  const char* why = NULL;
  symm_query(comm, t, &q);
  if (!plan_symm_pick(&q, &s, &why))
    return MK_FAIL(ncclInternalError, "plan: a collective chosen for the symmetric kernels no longer qualifies: %s", why);
  w->chunkSize = 0;
  if (s.oneShot) w->flags |= MK_WORK_SYMM_ONESHOT;
  w->symmSend = s.sendDelta;
  w->symmRecv = s.recvDelta;
  w->symmSendStride = s.sendStride;
  w->symmRecvStride = s.recvStride;
  w->symmRes = (char*)(uintptr_t)s.res;
  w->symmResStride = s.resStride;
  return ncclSuccess;
}
