/* Collective and point-to-point entry points: check the arguments, turn the
 * call into a task, queue it in the current group (a call outside any
 * group is a group of one and completes here for host buffers). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "base/err.h"
#include "comm/comm.h"
#include "comm/comm_redop.h"
#include "device/common/work.h"
#include "base/dtype.h"
#include "group/group.h"
#include "plan/plan.h"
#include "watch/watch.h"

/* Inside AlltoAll, Gather or Scatter: its sends and receives are one
 * collective to the peer watch, not many point-to-point calls. */
static __thread int coll_in_pattern;

/* perRank: the buffer holds nRanks blocks of count elements. */
static ncclResult_t coll_check(ncclComm_t comm, const char* fn, ncclDataType_t type, size_t count, int perRank) {
  MK_CHECK(comm_check_usable(comm, fn));
  size_t mult = perRank ? (size_t)comm->nRanks : 1;
  if ((int)type < 0 || type >= ncclNumTypes) return MK_FAIL(ncclInvalidArgument, "%s: invalid data type %d", fn, (int)type);
  size_t ts = host_type_size(type), bytes;
  /* A multiply that reports overflow, not two divisions: this check runs on
   * every call (about a tenth of a 1-rank 8 B AllReduce's time went to it). */
  if (__builtin_mul_overflow(count, ts * mult, &bytes))
    return MK_FAIL(ncclInvalidArgument, "%s: count %zu overflows the buffer size", fn, count);
  return ncclSuccess;
}

static ncclResult_t coll_check_buf(const char* fn, const char* what, const void* p, size_t count) {
  if (count && !p) return MK_FAIL(ncclInvalidArgument, "%s: %s is NULL", fn, what);
  return ncclSuccess;
}

static ncclResult_t coll_check_root(ncclComm_t comm, const char* fn, const char* what, int root) {
  if (root < 0 || root >= comm->nRanks)
    return MK_FAIL(ncclInvalidArgument, "%s: %s %d is out of range [0, %d)", fn, what, root, comm->nRanks);
  return ncclSuccess;
}

/* Queue in the current group, or run as a group of one (a small host
 * AllReduce alone runs at once: plan_alone.c). */
static ncclResult_t coll_submit_inside(ncclComm_t comm, task_t* t) {
  if (!coll_in_pattern)
    MK_CHECK(watch_op_enter(comm, (int)t->kind + 1, t->coll, t->count, (int)t->type, t->kind == TASK_COLL ? t->root : t->peer));
  int ran = 0;
  ncclResult_t alone = group_depth() == 0 ? plan_alone_run(comm, t, &ran) : ncclSuccess;
  if (ran || alone != ncclSuccess) return alone;
  MK_CHECK(group_start());
  ncclResult_t res = group_task_enqueue(comm, t);
  ncclResult_t end = group_end();
  if (res == ncclSuccess) res = end;
  if (res != ncclSuccess) watch_ops_done(comm); /* refused: this rank is not in it */
  if (res != ncclSuccess && t->kind != TASK_COLL && !coll_in_pattern) watch_p2p_refused(comm, (int)t->kind + 1, t->peer);
  return res;
}

/* Inside the comm for the whole call: an ncclCommAbort on another thread
 * waits for it (comm/comm_abort.c), or leaves the comm to it. */
static ncclResult_t coll_submit(ncclComm_t comm, task_t* t) {
  comm_busy_enter(comm);
  ncclResult_t res = coll_submit_inside(comm, t);
  comm_busy_leave(comm); /* the last touch: an abort may free it now */
  return res;
}

static ncclResult_t coll_task(ncclComm_t comm, const char* fn, int coll, const void* sendbuff, void* recvbuff,
                              size_t count, ncclDataType_t type, ncclRedOp_t op, int root, int reduces, void* stream) {
  task_t t = {0};
  t.stream = stream;
  t.kind = TASK_COLL;
  t.coll = coll;
  t.sendbuff = sendbuff;
  t.recvbuff = recvbuff;
  t.count = count;
  t.type = type;
  t.root = root;
  t.op = MK_OP_SUM;
  if (reduces) MK_CHECK(comm_redop_resolve(comm, fn, op, type, &t.op, &t.scalar, &t.scalarPtr));
  t.opUniform = !reduces || (int)op < (int)ncclNumOps;
  return coll_submit(comm, &t);
}

MK_API(ncclResult_t, AllReduce, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
       ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  const char* fn = "ncclAllReduce";
  MK_CHECK(coll_check(comm, fn, datatype, count, 0));
  MK_CHECK(coll_check_buf(fn, "sendbuff", sendbuff, count));
  MK_CHECK(coll_check_buf(fn, "recvbuff", recvbuff, count));
  return coll_task(comm, fn, MK_COLL_ALLREDUCE, sendbuff, recvbuff, count, datatype, op, 0, 1, stream);
}

MK_API(ncclResult_t, AllGather, const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
       ncclComm_t comm, cudaStream_t stream) {
  const char* fn = "ncclAllGather";
  MK_CHECK(coll_check(comm, fn, datatype, sendcount, 1));
  MK_CHECK(coll_check_buf(fn, "sendbuff", sendbuff, sendcount));
  MK_CHECK(coll_check_buf(fn, "recvbuff", recvbuff, sendcount));
  return coll_task(comm, fn, MK_COLL_ALLGATHER, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0, 0, stream);
}

MK_API(ncclResult_t, ReduceScatter, const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
       ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  const char* fn = "ncclReduceScatter";
  MK_CHECK(coll_check(comm, fn, datatype, recvcount, 1));
  MK_CHECK(coll_check_buf(fn, "sendbuff", sendbuff, recvcount));
  MK_CHECK(coll_check_buf(fn, "recvbuff", recvbuff, recvcount));
  return coll_task(comm, fn, MK_COLL_REDUCESCATTER, sendbuff, recvbuff, recvcount, datatype, op, 0, 1, stream);
}

MK_API(ncclResult_t, Broadcast, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
       ncclComm_t comm, cudaStream_t stream) {
  const char* fn = "ncclBroadcast";
  MK_CHECK(coll_check(comm, fn, datatype, count, 0));
  MK_CHECK(coll_check_root(comm, fn, "root", root));
  if (comm->rank == root) MK_CHECK(coll_check_buf(fn, "sendbuff", sendbuff, count));
  MK_CHECK(coll_check_buf(fn, "recvbuff", recvbuff, count));
  return coll_task(comm, fn, MK_COLL_BROADCAST, sendbuff, recvbuff, count, datatype, ncclSum, root, 0, stream);
}

MK_API(ncclResult_t, Bcast, void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
       cudaStream_t stream) {
  return pncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

MK_API(ncclResult_t, Reduce, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
       ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  const char* fn = "ncclReduce";
  MK_CHECK(coll_check(comm, fn, datatype, count, 0));
  MK_CHECK(coll_check_root(comm, fn, "root", root));
  MK_CHECK(coll_check_buf(fn, "sendbuff", sendbuff, count));
  if (comm->rank == root) MK_CHECK(coll_check_buf(fn, "recvbuff", recvbuff, count));
  return coll_task(comm, fn, MK_COLL_REDUCE, sendbuff, recvbuff, count, datatype, op, root, 1, stream);
}

/* owned: a buffer the task frees when it is done (or dropped), or NULL. */
static ncclResult_t p2p_task_owning(ncclComm_t comm, const char* fn, task_kind_t kind, const void* sendbuff,
                                    void* recvbuff, size_t count, ncclDataType_t type, int peer, void* stream,
                                    void* owned) {
  MK_CHECK(coll_check(comm, fn, type, count, 0));
  MK_CHECK(coll_check_root(comm, fn, "peer", peer));
  MK_CHECK(coll_check_buf(fn, "buffer", kind == TASK_SEND ? sendbuff : recvbuff, count));
  task_t t = {0};
  t.kind = kind;
  t.sendbuff = sendbuff;
  t.recvbuff = recvbuff;
  t.count = count;
  t.type = type;
  t.peer = peer;
  t.stream = stream;
  t.ownedBuf = owned;
  return coll_submit(comm, &t);
}

static ncclResult_t p2p_task(ncclComm_t comm, const char* fn, task_kind_t kind, const void* sendbuff, void* recvbuff,
                             size_t count, ncclDataType_t type, int peer, void* stream) {
  return p2p_task_owning(comm, fn, kind, sendbuff, recvbuff, count, type, peer, stream, NULL);
}

MK_API(ncclResult_t, Send, const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
       cudaStream_t stream) {
  return p2p_task(comm, "ncclSend", TASK_SEND, sendbuff, NULL, count, datatype, peer, stream);
}

MK_API(ncclResult_t, Recv, void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
       cudaStream_t stream) {
  return p2p_task(comm, "ncclRecv", TASK_RECV, NULL, recvbuff, count, datatype, peer, stream);
}

/* An in-place host AlltoAll sends from a copy of its input: its group's
 * receive from one peer lands on the piece it sends to another, which a
 * send larger than the connection buffers has not taken yet. The copy
 * belongs to the first send task and goes with it. (GPU communicators send
 * from the buffer itself, as NCCL does; NCCLX refuses in-place AlltoAll.) */
static ncclResult_t alltoall_input(ncclComm_t comm, const char* fn, const void* sendbuff, const void* recvbuff,
                                   size_t total, void** copy) {
  *copy = NULL;
  const char *s = sendbuff, *r = recvbuff;
  if (comm->cudaDev >= 0 || total == 0 || s + total <= r || r + total <= s) return ncclSuccess;
  void* c = malloc(total);
  if (!c) return MK_FAIL(ncclSystemError, "%s: out of memory for a copy of the in-place input (%zu bytes)", fn, total);
  memcpy(c, sendbuff, total);
  *copy = c;
  return ncclSuccess;
}

/* AlltoAll, Gather and Scatter are groups of sends and receives. */
static ncclResult_t p2p_pattern_inside(ncclComm_t comm, const char* fn, int pattern, const void* sendbuff,
                                       void* recvbuff, size_t count, ncclDataType_t type, int root, void* stream) {
  size_t bytes = count * host_type_size(type);
  void* copy = NULL;
  if (pattern == 0) MK_CHECK(alltoall_input(comm, fn, sendbuff, recvbuff, bytes * (size_t)comm->nRanks, &copy));
  const char* s = copy ? copy : sendbuff;
  char* r = recvbuff;
  ncclResult_t res = watch_op_enter(comm, 1, WATCH_OP_PATTERN + pattern, count, (int)type, root);
  if (res != ncclSuccess) {
    free(copy);
    return res;
  }
  res = group_start();
  coll_in_pattern = 1;
  for (int p = 0; p < comm->nRanks && res == ncclSuccess; p++) {
    size_t at = (size_t)p * bytes;
    if (pattern == 0) { /* alltoall */
      res = p2p_task_owning(comm, fn, TASK_SEND, s + at, NULL, count, type, p, stream, copy);
      if (res == ncclSuccess) {
        copy = NULL; /* the task owns it now */
        res = p2p_task(comm, fn, TASK_RECV, NULL, r + at, count, type, p, stream);
      }
    } else if (pattern == 1) { /* gather to root */
      if (p == comm->rank) res = p2p_task(comm, fn, TASK_SEND, sendbuff, NULL, count, type, root, stream);
      if (res == ncclSuccess && comm->rank == root) res = p2p_task(comm, fn, TASK_RECV, NULL, r + at, count, type, p, stream);
    } else { /* scatter from root */
      if (comm->rank == root) res = p2p_task(comm, fn, TASK_SEND, s + at, NULL, count, type, p, stream);
      if (res == ncclSuccess && p == comm->rank) res = p2p_task(comm, fn, TASK_RECV, NULL, recvbuff, count, type, root, stream);
    }
  }
  coll_in_pattern = 0;
  free(copy); /* no task took it */
  ncclResult_t end = group_end();
  return res != ncclSuccess ? res : end;
}

static ncclResult_t p2p_pattern(ncclComm_t comm, const char* fn, int pattern, const void* sendbuff, void* recvbuff,
                                size_t count, ncclDataType_t type, int root, void* stream) {
  MK_CHECK(coll_check(comm, fn, type, count, 1));
  if (pattern != 0) MK_CHECK(coll_check_root(comm, fn, "root", root));
  comm_busy_enter(comm); /* as coll_submit */
  ncclResult_t res = p2p_pattern_inside(comm, fn, pattern, sendbuff, recvbuff, count, type, root, stream);
  comm_busy_leave(comm);
  return res;
}

MK_API(ncclResult_t, AlltoAll, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
       ncclComm_t comm, cudaStream_t stream) {
  return p2p_pattern(comm, "ncclAlltoAll", 0, sendbuff, recvbuff, count, datatype, 0, stream);
}

MK_API(ncclResult_t, Gather, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
       ncclComm_t comm, cudaStream_t stream) {
  return p2p_pattern(comm, "ncclGather", 1, sendbuff, recvbuff, count, datatype, root, stream);
}

MK_API(ncclResult_t, Scatter, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
       ncclComm_t comm, cudaStream_t stream) {
  return p2p_pattern(comm, "ncclScatter", 2, sendbuff, recvbuff, count, datatype, root, stream);
}

MK_API(ncclResult_t, GroupStart, void) { return group_start(); }
MK_API(ncclResult_t, GroupEnd, void) { return group_end(); }

/* Like ncclGroupEnd, but the group's operations are only costed, not run. */
MK_API(ncclResult_t, GroupSimulateEnd, ncclSimInfo_t* simInfo) {
  ncclSimInfo_t want = NCCL_SIM_INFO_INITIALIZER;
  if (!simInfo) return MK_FAIL(ncclInvalidArgument, "ncclGroupSimulateEnd: simInfo is NULL");
  if (simInfo->magic != want.magic || simInfo->size < sizeof(ncclSimInfo_t))
    return MK_FAIL(ncclInvalidArgument, "ncclGroupSimulateEnd: simInfo was not set up with NCCL_SIM_INFO_INITIALIZER");
  float us = 0;
  MK_CHECK(group_simulate_end(&us));
  simInfo->estimatedTime = us;
  return ncclSuccess;
}
