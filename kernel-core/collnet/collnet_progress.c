/* CollNet's proxy progress: one sub per channel of an item, on the
 * collnetSend connector, moving both sides of the channel's pair.
 *
 *   posted:  the executor published step k of input (send tail, size) and
 *            the recv slot of step k is free (recv head): iallreduce from
 *            the send slot into the recv slot;
 *   done:    test says request k is complete: the result is published in
 *            the recv slot (size, then tail) and the send slot is freed
 *            (head).
 * Requests are posted and tested in step order, and every rank posts the
 * same steps in the same order (the items' order, then the steps'), which
 * is what a collective communicator of the plugin needs. Several ops on one
 * connection may be active at once: an op posts, and hands back, only once
 * the op before it did so for all its steps (as transport-net's ops do). */
#include <string.h>

#include "base/err.h"
#include "collnet/collnet_internal.h"
#include "device/common/work.h"
#include "transport/mkccl_conn_fifo_v1.h"

/* userData of a sub: [0] where the previous op on its connection ends,
 * [1] the element type, [2] the op (MK_OP_*). */
#define CN_PREV_END(sub) ((sub)->userData[0])
#define CN_TYPE(sub) ((sub)->userData[1])
#define CN_OP(sub) ((sub)->userData[2])

void collnet_sub_describe(mkcclProxySubOp_v1* sub, int type, int op) {
  CN_TYPE(sub) = type;
  CN_OP(sub) = op;
}

static void collnet_op_start(mkcclProxyOp_v1* op) {
  for (int s = 0; s < op->nsubs; s++) {
    mkcclProxySubOp_v1* sub = &op->subs[s];
    collnet_conn_t* c = sub->conn;
    CN_PREV_END(sub) = (int64_t)c->step;
    sub->base = (c->step + (uint64_t)op->chunkSteps - 1) / (uint64_t)op->chunkSteps * (uint64_t)op->chunkSteps;
    c->step = sub->base + sub->nsteps;
    sub->posted = sub->received = sub->transmitted = sub->done = 0;
  }
  op->done = 0;
  op->state = MKCCL_PROXY_OP_PROGRESS;
}

/* One request for each published step whose result slot is free. */
static ncclResult_t collnet_post(mkcclProxyOp_v1* op, int s) {
  mkcclProxySubOp_v1* sub = &op->subs[s];
  collnet_conn_t* c = sub->conn;
  const ncclCollNet_v12_t* cn = c->owner->cn;
  int ts = mk_type_size((int)CN_TYPE(sub));
  int redOp = collnet_plugin_op((int)CN_OP(sub));
  if (ts <= 0 || redOp < 0) {
    return MK_FAIL(ncclInternalError, "CollNet: an item of type %d and op %d reached the proxy: no collnet reduces it",
                   (int)CN_TYPE(sub), (int)CN_OP(sub));
  }
  while (sub->posted < sub->nsteps && c->postedEnd >= (uint64_t)CN_PREV_END(sub)) {
    uint64_t step = sub->base + sub->posted;
    int slot = conn_fifo_slot(step);
    if (!conn_fifo_can_consume(&c->sendTail->tail, step)) break;
    if (!conn_fifo_can_produce(&c->recvHead->head, step + (uint64_t)op->sliceSteps - 1)) break;
    int64_t size = conn_fifo_size_load(c->sendTail->connFifo, slot);
    if (size < 0) break;
    size_t off = (size_t)slot * (size_t)c->stepSize;
    void* req = NULL;
    ncclResult_t res = cn->iallreduce(c->collComm, c->sendBuff + off, c->recvBuff + off, (size_t)size / (size_t)ts,
                                      (ncclDataType_t)CN_TYPE(sub), (ncclRedOp_t)redOp, c->sendMh, c->recvMh, &req);
    if (res != ncclSuccess) return res;
    if (!req) break; /* the plugin is full: again next round */
    atomic_fetch_add_explicit(&c->owner->requests, 1, memory_order_relaxed);
    sub->requests[slot] = req;
    op->stepBytesKnown = 1;
    op->stepBytes[s][sub->posted % MKCCL_STEPS] = size;
    sub->posted += (uint64_t)op->sliceSteps;
    if (sub->posted == sub->nsteps) c->postedEnd = sub->base + sub->nsteps;
    op->idle = 0;
  }
  return ncclSuccess;
}

/* Completed requests, in step order: the result to the executor, the input
 * slot back. */
static ncclResult_t collnet_complete(mkcclProxyOp_v1* op, int s) {
  mkcclProxySubOp_v1* sub = &op->subs[s];
  collnet_conn_t* c = sub->conn;
  const ncclCollNet_v12_t* cn = c->owner->cn;
  while (sub->done < sub->posted && c->handedEnd >= (uint64_t)CN_PREV_END(sub)) {
    uint64_t step = sub->base + sub->done;
    int slot = conn_fifo_slot(step);
    int done = 0, size = 0;
    ncclResult_t res = cn->test(sub->requests[slot], &done, &size);
    if (res != ncclSuccess) return res;
    if (!done) break;
    sub->requests[slot] = NULL;
    conn_fifo_publish(c->recvTail->connFifo, &c->recvTail->tail, step, op->sliceSteps,
                      conn_fifo_size_load(c->sendTail->connFifo, slot));
    conn_fifo_release(c->sendTail->connFifo, &c->sendHead->head, step, op->sliceSteps);
    sub->done += (uint64_t)op->sliceSteps;
    op->idle = 0;
    if (sub->done == sub->nsteps) {
      c->handedEnd = sub->base + sub->nsteps;
      op->done++;
    }
  }
  return ncclSuccess;
}

ncclResult_t collnet_progress(void* tctx, mkcclProxyOp_v1* op) {
  (void)tctx;
  if (op->state == MKCCL_PROXY_OP_READY) collnet_op_start(op);
  for (int s = 0; s < op->nsubs; s++) {
    mkcclProxySubOp_v1* sub = &op->subs[s];
    if (sub->done == sub->nsteps) continue;
    ncclResult_t res = collnet_post(op, s);
    if (res == ncclSuccess) res = collnet_complete(op, s);
    if (res != ncclSuccess) return res;
  }
  if (op->done == op->nsubs) op->state = MKCCL_PROXY_OP_DONE;
  return ncclSuccess;
}
