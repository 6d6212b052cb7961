/* Proxy progress of net connections: the send and receive state machines
 * of the proxy (DESIGN.md, "Proxy") over global steps.
 *
 * Receives of subs that share a net comm (and move the same number of
 * steps) are posted as one grouped irecv; the request lives in the group
 * leader's slot. A receive goes received -> (flushed) -> transmitted (tail
 * published) -> done (the executor consumed it; irecvConsumed if asked).
 *
 * Connections with a pool (OFFSET mode, transport_net_pool.c) hold a slot
 * per step: a receive takes one before its irecv and writes mode and offset
 * in connFifo before tail; a send takes one before the executor may write:
 * the proxy writes the offset, then moves head, which on such a connection
 * counts steps granted (the executor waits for head > step) rather than
 * steps freed.
 *
 * A send step in PTR mode goes out from the user's buffer (net_send_source). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "transport/mkccl_conn_fifo_v1.h"
#include "transport_net.h"

static uint64_t net_round_up(uint64_t x, uint64_t m) { return (x + m - 1) / m * m; }

/* The profiler handle of step k of a sub, if the core attached one. */
static void* net_phandle(mkcclProxySubOp_v1* sub, uint64_t k) {
  return sub->profilerHandle ? ((void**)sub->profilerHandle)[k % MKCCL_STEPS] : NULL;
}

/* userData[0] of a sub: where the previous op on its connection ends. */
#define NET_PREV_END(sub) ((sub)->userData[0])
/* userData[1] of a group's lead: steps the plugin was told are consumed. */
#define NET_CONSUMED(lead) ((lead)->userData[1])
/* userData[2] of a sub with a pool: its ticket (grant order in the pool). */
#define NET_TICKET(sub) ((sub)->userData[2])
/* userData[3] of a recv sub: 1 when its steps land in the user's buffer
 * (sub->userBuff, under sub->mhandle) in place. */
#define NET_IN_PLACE(sub) ((sub)->userData[3])

/* Whether the sub's pool grants its steps now (and it has one). */
static int net_pool_turn(const mkcclProxySubOp_v1* sub) {
  const transport_net_conn_t* c = sub->conn;
  return c->pool->serving == (uint64_t)NET_TICKET(sub);
}

/* A sub whose steps all have a slot lets the next ticket be served. */
static void net_pool_granted(mkcclProxySubOp_v1* sub) {
  transport_net_conn_t* c = sub->conn;
  if (c->pool && NET_TICKET(sub) >= 0 && sub->posted == sub->nsteps) c->pool->serving++;
}

/* Where step `step` of connection c lives. */
static char* net_step_ptr(const transport_net_conn_t* c, uint64_t step) {
  int fs = conn_fifo_slot(step);
  if (c->pool) return c->pool->buff + (size_t)c->poolSlot[fs] * (size_t)c->stepSize;
  return c->buff + (size_t)fs * (size_t)c->stepSize;
}

/* Where a published send step goes out from, and under which registration:
 * its slot, or for a PTR step the user's buffer (copied into the slot
 * first where the plugin has no registration of it). */
static ncclResult_t net_send_source(transport_net_conn_t* c, uint64_t step, int64_t size, void** data,
                                    void** mhandle, int* inPlace) {
  mkcclConnFifo_v1* f = &c->recvMem->connFifo[conn_fifo_slot(step)];
  *data = net_step_ptr(c, step);
  *mhandle = c->mhandle;
  *inPlace = -1;
  if (f->mode != MKCCL_MODE_PTR || size <= 0) return ncclSuccess;
  void* mh = transport_net_reg_mhandle(c->ctx, c, f->ptr, (size_t)size);
  *inPlace = mh != NULL;
  if (mh) {
    *data = f->ptr;
    *mhandle = mh;
    return ncclSuccess;
  }
  /* The slot is this step's (granted, or freed 8 steps ago). A GPU
   * buffer goes into the slot (GPU memory then) through the driver. */
  const mkcclTransportServices_v1* sv = c->ctx->services;
  if (sv->cudaDev < 0) {
    memcpy(*data, f->ptr, (size_t)size);
    return ncclSuccess;
  }
  if (!MKCCL_SERVICES_HAS(sv, deviceCopy) || !sv->deviceCopy) {
    sv->log(NCCL_LOG_WARN, NCCL_NET, __FILE__, __LINE__,
            "transport-net: rank %d: a GPU buffer posted for rank %d cannot be sent: the net plugin did not register "
            "it and the core lends no device copy", sv->rank, c->peer);
    return ncclInternalError;
  }
  return sv->deviceCopy(sv->ctx, *data, f->ptr, (size_t)size);
}

/* Where receive k (from the sub's first step) of a sub lands, and its size:
 * its slot, or in place its piece of the user's buffer (k chunks in, the
 * chunk or what is left), where the executor then finds it (PTR mode). */
static void net_recv_dest(const mkcclProxyOp_v1* op, const mkcclProxySubOp_v1* sub, uint64_t k, void** data,
                          size_t* size, void** mhandle) {
  const transport_net_conn_t* c = sub->conn;
  if (NET_IN_PLACE(sub)) {
    int64_t off = (int64_t)k * op->chunkSize, left = sub->nbytes - off;
    *data = (char*)sub->userBuff + off;
    *size = (size_t)(left < op->chunkSize ? left : op->chunkSize);
    *mhandle = sub->mhandle;
    return;
  }
  *data = net_step_ptr(c, sub->base + k);
  *size = (size_t)c->stepSize * (size_t)op->sliceSteps;
  *mhandle = c->mhandle;
}

/* A receiving sub with a registered part of the user's buffer lands in it
 * when the net plugin registered that range: every chunk but empty parts
 * (one step each), at most one chunk a step. */
static void net_recv_in_place(transport_net_ctx_t* ctx, const mkcclProxyOp_v1* op, mkcclProxySubOp_v1* sub) {
  NET_IN_PLACE(sub) = 0;
  if (!ctx->ptrRecv || !sub->userBuff || sub->nbytes <= 0 || op->sliceSteps != 1 || op->chunkSteps != 1 ||
      !transport_net_conn_user_ok(sub->conn) ||
      (uint64_t)((sub->nbytes + op->chunkSize - 1) / op->chunkSize) != sub->nsteps)
    return;
  sub->mhandle = transport_net_reg_mhandle(ctx, sub->conn, sub->userBuff, (size_t)sub->nbytes);
  NET_IN_PLACE(sub) = sub->mhandle != NULL;
}

/* Pool slot `slot` to step `step` of c, and the executor told in connFifo. */
static void net_pool_assign(transport_net_conn_t* c, uint64_t step, int slot) {
  int fs = conn_fifo_slot(step);
  c->poolSlot[fs] = slot;
  mkcclConnFifo_v1* f = &c->recvMem->connFifo[fs];
  f->offset = slot * c->stepSize;
  f->mode = MKCCL_MODE_OFFSET;
  __atomic_add_fetch(&c->ctx->offsetSteps, 1, __ATOMIC_RELAXED);
}

static void net_pool_unassign(transport_net_conn_t* c, uint64_t step) {
  int fs = conn_fifo_slot(step);
  if (c->poolSlot[fs] >= 0) transport_net_pool_put(c->pool, c->poolSlot[fs]);
  c->poolSlot[fs] = -1;
}

/* Recv with a pool: the steps below the executor's head were consumed
 * (or skipped, holding none): their slots go back. */
static void net_pool_reclaim(transport_net_conn_t* c, uint64_t head) {
  for (; c->reclaimed < head; c->reclaimed++) net_pool_unassign(c, c->reclaimed);
}

/* Several ops on one connection may be active at once; each may post, test
 * its receives, and hand steps back to the executor, only once the op before
 * it on that connection (ending at `end`) has done so for all of its steps:
 * - posting: messages of one tag match receives in post order, so an op
 *   whose isend or irecv went ahead of an earlier op's (retried after a
 *   busy plugin) would swap their data;
 * - testing a receive: NCCL runs the ops of a connection one after the
 *   other, so it never tests a receive while an earlier one of the same
 *   connection is unfinished, and plugins rely on it: Google's
 *   nccl-fastsocket answers such a test with ncclInternalError ("test called
 *   with invalid request"). Sends need no turn of their own: their tests
 *   wait for handing back, which follows every earlier send's;
 * - handing back: head and tail are absolute step counts, and a plugin may
 *   complete a later op's requests first (libfabric: an eager message
 *   overtakes a rendezvous one), so the later op would publish steps whose
 *   data has not arrived, and the earlier op's last store would then move
 *   head or tail backwards (a hang). */
static int net_turn(const mkcclProxySubOp_v1* sub, uint64_t end) { return end >= (uint64_t)NET_PREV_END(sub); }

/* READY -> PROGRESS: each sub starts at its connection's step, rounded up
 * to a chunk, exactly as the executor does; receives are grouped. */
static void net_op_start(transport_net_ctx_t* ctx, mkcclProxyOp_v1* op, int isRecv) {
  for (int s = 0; s < op->nsubs; s++) {
    mkcclProxySubOp_v1* sub = &op->subs[s];
    transport_net_conn_t* c = sub->conn;
    NET_PREV_END(sub) = (int64_t)c->step;
    sub->base = net_round_up(c->step, (uint64_t)op->chunkSteps);
    c->step = sub->base + sub->nsteps;
    sub->posted = sub->received = sub->transmitted = sub->done = 0;
    NET_CONSUMED(sub) = 0;
    if (isRecv) net_recv_in_place(ctx, op, sub);
    else NET_IN_PLACE(sub) = 0;
    /* No steps, or none taking a slot: never served. */
    NET_TICKET(sub) = c->pool && sub->nsteps && !NET_IN_PLACE(sub) ? (int64_t)c->pool->tickets++ : -1;
    sub->groupSize = 1;
  }
  if (isRecv) {
    for (int s = 0; s < op->nsubs;) {
      mkcclProxySubOp_v1* lead = &op->subs[s];
      transport_net_conn_t* lc = lead->conn;
      int g = 1;
      while (s + g < op->nsubs && g < ctx->maxRecvs) {
        mkcclProxySubOp_v1* sub = &op->subs[s + g];
        transport_net_conn_t* c = sub->conn;
        if (!lc->shared || c->netComm != lc->netComm || sub->nsteps != lead->nsteps) break;
        /* One ticket per pool is served at a time: a group spans pools. */
        int samePool = 0;
        for (int i = 0; i < g && c->pool; i++) samePool |= ((transport_net_conn_t*)op->subs[s + i].conn)->pool == c->pool;
        if (samePool) break;
        sub->groupSize = 0; /* a member, not a leader */
        g++;
      }
      lead->groupSize = g;
      s += g;
    }
  }
  op->done = 0;
  op->state = MKCCL_PROXY_OP_PROGRESS;
}

ncclResult_t transport_net_send_progress(void* tctx, mkcclProxyOp_v1* op) {
  transport_net_ctx_t* ctx = tctx;
  const ncclNet_v12_t* net = ctx->net;
  if (op->state == MKCCL_PROXY_OP_READY) net_op_start(ctx, op, 0);
  for (int s = 0; s < op->nsubs; s++) {
    mkcclProxySubOp_v1* sub = &op->subs[s];
    if (sub->done == sub->nsteps) continue;
    transport_net_conn_t* c = sub->conn;
    mkcclConnFifo_v1* fifo = c->recvMem->connFifo;
    /* Pool: grant the next steps a slot, offset before head. FIFO entries
     * (and poolSlot) of a step are reused 8 steps on, once it was sent. */
    while (c->pool && sub->posted < sub->nsteps && net_pool_turn(sub)) {
      uint64_t step = sub->base + sub->posted;
      if (op->sliceSteps != 1) {
        c->ctx->services->log(NCCL_LOG_WARN, NCCL_NET, __FILE__, __LINE__,
                              "transport-net: shared buffers take one step per slice, rank %d's op has %d", c->peer,
                              op->sliceSteps);
        return ncclInternalError;
      }
      if (step >= c->sendDone + MKCCL_STEPS) break;
      int slot = transport_net_pool_take(c->pool);
      if (slot < 0) break;
      net_pool_assign(c, step, slot);
      sub->posted++;
      conn_fifo_store(&c->sendMem->head, sub->base + sub->posted);
      net_pool_granted(sub);
      op->idle = 0;
    }
    /* Published by the executor: send it, in step order. */
    while (sub->transmitted < sub->nsteps && net_turn(sub, c->postedEnd)) {
      uint64_t step = sub->base + sub->transmitted;
      int slot = conn_fifo_slot(step);
      if (!conn_fifo_can_consume(&c->recvMem->tail, step)) break;
      int64_t size = conn_fifo_size_load(fifo, slot);
      if (size < 0) break;
      void *req = NULL, *data, *mhandle;
      int inPlace;
      ncclResult_t res = net_send_source(c, step, size, &data, &mhandle, &inPlace);
      if (res != ncclSuccess) return res;
      res = net->isend(c->netComm, data, (size_t)size, c->tag, mhandle,
                                    net_phandle(sub, sub->transmitted), &req);
      if (res != ncclSuccess) return res;
      if (!req) break; /* the plugin is busy: try again next round */
      if (inPlace >= 0) transport_net_reg_count(ctx, inPlace, (uint64_t)size);
      sub->requests[slot] = req;
      op->stepBytesKnown = 1;
      op->stepBytes[s][sub->transmitted % MKCCL_STEPS] = size;
      sub->transmitted += (uint64_t)op->sliceSteps;
      if (sub->transmitted == sub->nsteps) c->postedEnd = sub->base + sub->nsteps;
      op->idle = 0;
    }
    /* Completed sends free their slot for the executor, in step order. */
    while (sub->done < sub->transmitted && net_turn(sub, c->handedEnd)) {
      uint64_t step = sub->base + sub->done;
      int slot = conn_fifo_slot(step);
      int done = 0;
      ncclResult_t res = net->test(sub->requests[slot], &done, NULL);
      if (res != ncclSuccess) return res;
      if (!done) break;
      sub->requests[slot] = NULL;
      sub->done += (uint64_t)op->sliceSteps;
      fifo[slot].mode = MKCCL_MODE_NORMAL; /* a PTR step's entry is a plain one again */
      if (c->pool) { /* head counts grants: only the slot and its entry go back (an empty entry ends a PTR send) */
        net_pool_unassign(c, step);
        conn_fifo_size_store(fifo, slot, -1);
        c->sendDone = step + 1;
      } else {
        conn_fifo_release(fifo, &c->sendMem->head, step, op->sliceSteps);
      }
      op->idle = 0;
      if (sub->done == sub->nsteps) {
        c->handedEnd = sub->base + sub->nsteps;
        op->done++;
      }
    }
  }
  if (op->done == op->nsubs) op->state = MKCCL_PROXY_OP_DONE;
  return ncclSuccess;
}

/* Post the next receive of a group (all members at the same relative step). */
static ncclResult_t net_recv_post(transport_net_ctx_t* ctx, mkcclProxyOp_v1* op, mkcclProxySubOp_v1* lead,
                                  int* posted) {
  *posted = 0;
  int g = lead->groupSize;
  if (lead->posted >= lead->nsteps) return ncclSuccess;
  /* Receives in flight per sub: min(NCCL_STEPS, SHARED_STEPS / nsubs). */
  uint64_t maxDepth = (uint64_t)(MKCCL_SHARED_STEPS / op->nsubs < MKCCL_STEPS ? MKCCL_SHARED_STEPS / op->nsubs : MKCCL_STEPS);
  if (maxDepth < (uint64_t)op->sliceSteps) maxDepth = (uint64_t)op->sliceSteps;
  if (lead->posted >= lead->done + maxDepth) return ncclSuccess;
  void* data[MKCCL_PROXY_MAX_SUBS];
  size_t sizes[MKCCL_PROXY_MAX_SUBS];
  int tags[MKCCL_PROXY_MAX_SUBS];
  void* mhandles[MKCCL_PROXY_MAX_SUBS];
  void* phandles[MKCCL_PROXY_MAX_SUBS];
  for (int i = 0; i < g; i++) {
    mkcclProxySubOp_v1* sub = lead + i;
    transport_net_conn_t* c = sub->conn;
    uint64_t step = sub->base + sub->posted;
    if (!net_turn(sub, c->postedEnd)) return ncclSuccess;
    if (!c->pool || NET_IN_PLACE(sub)) {
      if (!conn_fifo_can_produce(&c->sendMem->head, step + (uint64_t)op->sliceSteps - 1)) return ncclSuccess;
      continue;
    }
    if (op->sliceSteps != 1) {
      ctx->services->log(NCCL_LOG_WARN, NCCL_NET, __FILE__, __LINE__,
                         "transport-net: shared buffers take one step per slice, rank %d's op has %d", c->peer,
                         op->sliceSteps);
      return ncclInternalError;
    }
    /* One head read for both: slots below it go back, and the FIFO entry
     * this step takes is then free (its step 8 earlier is below it). */
    uint64_t head = conn_fifo_load(&c->sendMem->head);
    net_pool_reclaim(c, head);
    if (head + MKCCL_STEPS <= step || !net_pool_turn(sub) || transport_net_pool_free_slots(c->pool) == 0)
      return ncclSuccess;
  }
  for (int i = 0; i < g; i++) {
    mkcclProxySubOp_v1* sub = lead + i;
    transport_net_conn_t* c = sub->conn;
    uint64_t step = sub->base + sub->posted;
    mkcclConnFifo_v1* f = &c->recvMem->connFifo[conn_fifo_slot(step)];
    if (c->pool && !NET_IN_PLACE(sub)) net_pool_assign(c, step, transport_net_pool_take(c->pool));
    net_recv_dest(op, sub, sub->posted, &data[i], &sizes[i], &mhandles[i]);
    /* The executor reads where the step is from the entry (it reads it
     * after tail: written now, before the receive). */
    if (NET_IN_PLACE(sub)) {
      f->ptr = data[i];
      f->mode = MKCCL_MODE_PTR;
    } else if (!c->pool && ctx->ptrRecv) {
      f->mode = MKCCL_MODE_NORMAL;
    }
    tags[i] = c->tag;
    phandles[i] = net_phandle(sub, sub->posted);
  }
  transport_net_conn_t* lc = lead->conn;
  void* req = NULL;
  ncclResult_t res = ctx->net->irecv(lc->netComm, g, data, sizes, tags, mhandles, phandles, &req);
  if (!req || res != ncclSuccess) { /* not posted: the slots go back */
    for (int i = 0; i < g; i++) {
      transport_net_conn_t* c = lead[i].conn;
      if (c->pool && !NET_IN_PLACE(&lead[i])) {
        net_pool_unassign(c, lead[i].base + lead[i].posted);
        __atomic_sub_fetch(&c->ctx->offsetSteps, 1, __ATOMIC_RELAXED);
      }
    }
    return res;
  }
  lead->requests[conn_fifo_slot(lead->base + lead->posted)] = req;
  op->stepBytesKnown = 1;
  for (int i = 0; i < g; i++) {
    mkcclProxySubOp_v1* sub = lead + i;
    op->stepBytes[sub - op->subs][sub->posted % MKCCL_STEPS] = 0; /* nothing received yet */
    sub->posted += (uint64_t)op->sliceSteps;
    if (sub->posted == sub->nsteps) ((transport_net_conn_t*)sub->conn)->postedEnd = sub->base + sub->nsteps;
    net_pool_granted(sub);
  }
  *posted = 1;
  return ncclSuccess;
}

/* A posted group receive completed: flush if needed, then publish. */
static ncclResult_t net_recv_complete(transport_net_ctx_t* ctx, mkcclProxyOp_v1* op, mkcclProxySubOp_v1* lead,
                                      int* progressed) {
  *progressed = 0;
  int g = lead->groupSize;
  transport_net_conn_t* lc = lead->conn;
  int turn = 1;
  for (int i = 0; i < g; i++) turn &= net_turn(lead + i, ((transport_net_conn_t*)lead[i].conn)->receivedEnd);
  if (turn && lead->received < lead->posted) {
    int slot = conn_fifo_slot(lead->base + lead->received);
    int done = 0, sizes[MKCCL_PROXY_MAX_SUBS];
    ncclResult_t res = ctx->net->test(lead->requests[slot], &done, sizes);
    if (res != ncclSuccess) return res;
    if (!done) return ncclSuccess;
    /* Plugins that want irecvConsumed keep the request until then. */
    lc->consumeReq[slot] = lc->needConsumed ? lead->requests[slot] : NULL;
    lead->requests[slot] = NULL;
    for (int i = 0; i < g; i++) {
      op->stepBytes[lead + i - op->subs][lead[i].received % MKCCL_STEPS] = sizes[i];
      if (NET_IN_PLACE(&lead[i])) transport_net_reg_count_recv(ctx, (uint64_t)sizes[i]);
      lead[i].received += (uint64_t)op->sliceSteps;
      if (lead[i].received == lead[i].nsteps) ((transport_net_conn_t*)lead[i].conn)->receivedEnd = lead[i].base + lead[i].nsteps;
    }
    if (lc->needFlush && ctx->net->iflush) {
      void* data[MKCCL_PROXY_MAX_SUBS];
      void* mhandles[MKCCL_PROXY_MAX_SUBS];
      for (int i = 0; i < g; i++) {
        size_t posted;
        net_recv_dest(op, &lead[i], lead[i].received - (uint64_t)op->sliceSteps, &data[i], &posted, &mhandles[i]);
      }
      void* freq = NULL;
      res = ctx->net->iflush(lc->netComm, g, data, sizes, mhandles, &freq);
      if (res != ncclSuccess) return res;
      lead->requests[slot] = freq; /* NULL: nothing to wait for */
    }
    *progressed = 1;
  }
  /* Flushed (or nothing to flush): the executor may read, in step order. */
  for (int i = 0; i < g; i++)
    if (!net_turn(lead + i, ((transport_net_conn_t*)lead[i].conn)->handedEnd)) return ncclSuccess;
  if (lead->transmitted < lead->received) {
    int slot = conn_fifo_slot(lead->base + lead->transmitted);
    if (lead->requests[slot]) {
      int done = 0;
      ncclResult_t res = ctx->net->test(lead->requests[slot], &done, NULL);
      if (res != ncclSuccess) return res;
      if (!done) return ncclSuccess;
      lead->requests[slot] = NULL;
    }
    for (int i = 0; i < g; i++) {
      mkcclProxySubOp_v1* sub = lead + i;
      transport_net_conn_t* c = sub->conn;
      sub->transmitted += (uint64_t)op->sliceSteps;
      conn_fifo_store(&c->recvMem->tail, sub->base + sub->transmitted);
      if (sub->transmitted == sub->nsteps) c->handedEnd = sub->base + sub->nsteps;
    }
    *progressed = 1;
  }
  return ncclSuccess;
}

ncclResult_t transport_net_recv_progress(void* tctx, mkcclProxyOp_v1* op) {
  transport_net_ctx_t* ctx = tctx;
  if (op->state == MKCCL_PROXY_OP_READY) net_op_start(ctx, op, 1);
  for (int s = 0; s < op->nsubs; s += op->subs[s].groupSize) {
    mkcclProxySubOp_v1* lead = &op->subs[s];
    int g = lead->groupSize, moved, finished = 1;
    /* Every member, not just the first and last: the executor consumes each
     * member's steps on its own channel, in any order. */
    for (int i = 0; i < g; i++) finished &= lead[i].done == lead[i].nsteps;
    if (finished) continue;
    do {
      ncclResult_t res = net_recv_post(ctx, op, lead, &moved);
      if (res != ncclSuccess) return res;
      if (moved) op->idle = 0;
    } while (moved);
    do {
      ncclResult_t res = net_recv_complete(ctx, op, lead, &moved);
      if (res != ncclSuccess) return res;
      if (moved) op->idle = 0;
    } while (moved);
    /* The executor consumed them: sub done. */
    uint64_t groupDone = UINT64_MAX; /* steps every member consumed */
    for (int i = 0; i < g; i++) {
      mkcclProxySubOp_v1* sub = lead + i;
      transport_net_conn_t* c = sub->conn;
      uint64_t head = conn_fifo_load(&c->sendMem->head);
      if (c->pool) net_pool_reclaim(c, head);
      while (sub->done < sub->transmitted && head >= sub->base + sub->done + (uint64_t)op->sliceSteps) {
        sub->done += (uint64_t)op->sliceSteps;
        op->idle = 0;
        if (sub->done == sub->nsteps) op->done++;
      }
      if (sub->done < groupDone) groupDone = sub->done;
    }
    /* One grouped request lands every member's step: the plugin hears it
     * consumed once all of them are (it may then reuse the landing space). */
    transport_net_conn_t* lc = lead->conn;
    while ((uint64_t)NET_CONSUMED(lead) < groupDone) {
      int slot = conn_fifo_slot(lead->base + (uint64_t)NET_CONSUMED(lead));
      if (lc->consumeReq[slot] && ctx->net->irecvConsumed) {
        ncclResult_t res = ctx->net->irecvConsumed(lc->netComm, g, lc->consumeReq[slot]);
        if (res != ncclSuccess) return res;
      }
      lc->consumeReq[slot] = NULL;
      NET_CONSUMED(lead) += op->sliceSteps;
    }
  }
  if (op->done == op->nsubs) op->state = MKCCL_PROXY_OP_DONE;
  return ncclSuccess;
}
