/* The engine's thread. Each round, for every peer: sends that completed
 * are retired in order (a descriptor's last one moves its queue's consumer
 * index, which is what the kernels' flush waits for, and its counter);
 * new descriptors are taken and cut into messages while send slots are
 * free; receives that completed are applied in order (payload into the
 * window, complete, then the signal) and posted again. Puts to this rank
 * itself are applied at once. A failure stops the work, is kept for
 * gin_engine_destroy and told to onFail, and the kernels are let go
 * (GIN_FAIL_RELEASE in gin.h). */
#include <sched.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "base/param.h"
#include "gin/gin_internal.h"

#define GIN_SPIN_ROUNDS 2000

static volatile uint64_t* gin_slot(gin_engine_t* e, gin_ctx_t* c, int p) {
  uint32_t i = c->taken[p] & (e->queueSize - 1);
  return (volatile uint64_t*)((char*)c->queuesHost + ((size_t)p * e->queueSize + i) * GIN_GFD_BYTES);
}

static ncclResult_t gin_window(gin_engine_t* e, uint64_t handle, uint64_t off, uint64_t bytes, int peer,
                               const char* role, char** out) {
  char* base = NULL;
  size_t size = 0;
  if (!e->cfg.winFind(e->cfg.winFindArg, handle, &base, &size))
    return MK_FAIL(ncclInvalidUsage, "GIN: rank %d: a put %s rank %d names window handle %llu, which this rank has "
                   "not registered", e->cfg.rank, role, peer, (unsigned long long)handle);
  if (off > size || bytes > size - off)
    return MK_FAIL(ncclInvalidUsage, "GIN: rank %d: a put %s rank %d reaches bytes %llu..%llu of a %zu-byte window",
                   e->cfg.rank, role, peer, (unsigned long long)off, (unsigned long long)(off + bytes), size);
  *out = base + off;
  return ncclSuccess;
}

static ncclResult_t gin_check_gfd(gin_engine_t* e, const gin_gfd_t* g, int peer) {
  int sig = (g->op & (GIN_OP_SIGNAL_INC | GIN_OP_SIGNAL_ADD)) != 0;
  if (!(g->op & GIN_OP_PUT) || (g->op & GIN_OP_SIGNAL_INC && g->op & GIN_OP_SIGNAL_ADD))
    return MK_FAIL(ncclInvalidUsage, "GIN: rank %d: descriptor for rank %d has op 0x%x, not a put", e->cfg.rank, peer,
                   g->op);
  if (g->op & GIN_OP_INLINE && g->size > 8)
    return MK_FAIL(ncclInvalidUsage, "GIN: rank %d: inline put of %llu bytes to rank %d (8 at most)", e->cfg.rank,
                   (unsigned long long)g->size, peer);
  if (sig && (int)g->signalId >= e->cfg.nSignals)
    return MK_FAIL(ncclInvalidUsage, "GIN: rank %d: signal %u to rank %d, of %d signals", e->cfg.rank, g->signalId,
                   peer, e->cfg.nSignals);
  if (g->op & GIN_OP_COUNTER && (int)g->counterId >= e->cfg.nCounters)
    return MK_FAIL(ncclInvalidUsage, "GIN: rank %d: counter %u of %d counters", e->cfg.rank, g->counterId,
                   e->cfg.nCounters);
  return ncclSuccess;
}

static uint64_t gin_signal_add(const gin_gfd_t* g) { return g->op & GIN_OP_SIGNAL_INC ? 1 : g->signalValue; }

/* `bytes` of descriptor g's payload from offset `at` into dst. */
static ncclResult_t gin_payload(gin_engine_t* e, const gin_gfd_t* g, uint64_t at, uint64_t bytes, int peer, char* dst) {
  if (g->op & GIN_OP_INLINE) {
    memcpy(dst, (const char*)&g->inlineValue + at, bytes); /* little-endian: the low bytes first */
    return ncclSuccess;
  }
  if (bytes == 0) return ncclSuccess;
  char* src;
  MK_CHECK(gin_window(e, g->srcWin, g->srcOff + at, bytes, peer, "to", &src));
  return e->cfg.mem.from_dev(e->cfg.mem.ctx, dst, src, bytes);
}

static void gin_retire(gin_engine_t* e, int c, int p, int hasCounter, uint32_t counterId) {
  gin_ctx_t* x = &e->ctx[c];
  if (hasCounter) __atomic_fetch_add(&x->countersHost[counterId], 1, __ATOMIC_RELEASE);
  __atomic_store_n(&x->cisHost[p], ++x->consumed[p], __ATOMIC_RELEASE);
}

/* Puts to this rank: the payload and signal applied now, in queue order. */
static ncclResult_t gin_self(gin_engine_t* e, int c, int* progressed) {
  gin_ctx_t* x = &e->ctx[c];
  int me = e->cfg.rank;
  gin_gfd_t g;
  while (gin_gfd_take(gin_slot(e, x, me), &g)) {
    x->taken[me]++;
    *progressed = 1;
    MK_CHECK(gin_check_gfd(e, &g, me));
    for (uint64_t at = 0; at < g.size; at += e->chunk) {
      uint64_t n = g.size - at < e->chunk ? g.size - at : e->chunk;
      char* dst;
      MK_CHECK(gin_payload(e, &g, at, n, me, e->selfBuf));
      MK_CHECK(gin_window(e, g.dstWin, g.dstOff + at, n, me, "from", &dst));
      MK_CHECK(e->cfg.mem.to_dev(e->cfg.mem.ctx, dst, e->selfBuf, n));
    }
    if (g.op & (GIN_OP_SIGNAL_INC | GIN_OP_SIGNAL_ADD))
      __atomic_fetch_add(&x->signalsHost[g.signalId], gin_signal_add(&g), __ATOMIC_SEQ_CST);
    gin_retire(e, c, me, (g.op & GIN_OP_COUNTER) != 0, g.counterId);
  }
  return ncclSuccess;
}

/* Completed sends to p, oldest first; then sends the plugin put off. */
static ncclResult_t gin_send_retire(gin_engine_t* e, int p, int* progressed) {
  gin_peer_t* peer = &e->peers[p];
  const ncclNet_v12_t* net = e->cfg.net;
  while (peer->sendCount > 0) {
    int i = peer->sendHead;
    gin_send_t* s = &peer->sends[i];
    if (!s->posted) break;
    int done = 0;
    ncclResult_t r = net->test(s->req, &done, NULL);
    if (r != ncclSuccess) return MK_FAIL(r, "GIN: rank %d: a send to rank %d failed", e->cfg.rank, p);
    if (!done) break;
    if (s->last) gin_retire(e, s->ctx, p, s->hasCounter, s->counterId);
    __atomic_fetch_add(&peer->sentMsgs, 1, __ATOMIC_RELEASE);
    peer->sendHead = (i + 1) % GIN_SENDS;
    peer->sendCount--;
    *progressed = 1;
  }
  for (int k = 0; k < peer->sendCount; k++) {
    int i = (peer->sendHead + k) % GIN_SENDS;
    gin_send_t* s = &peer->sends[i];
    if (s->posted) continue;
    ncclResult_t r = net->isend(peer->sendComm, peer->sendBuf + (size_t)i * e->slotBytes, s->bytes, GIN_TAG,
                                peer->sendMh, NULL, &s->req);
    if (r != ncclSuccess) return MK_FAIL(r, "GIN: rank %d: sending to rank %d failed", e->cfg.rank, p);
    if (!s->req) break; /* the plugin wants us back later; order kept */
    s->posted = 1;
    *progressed = 1;
  }
  return ncclSuccess;
}

/* New messages to p from context c's queue while send slots are free. */
static ncclResult_t gin_send_new(gin_engine_t* e, int c, int p, int* progressed) {
  gin_ctx_t* x = &e->ctx[c];
  gin_peer_t* peer = &e->peers[p];
  gin_cur_t* cur = &x->cur[p];
  while (peer->sendCount < GIN_SENDS) {
    if (!cur->active) {
      if (!gin_gfd_take(gin_slot(e, x, p), &cur->gfd)) return ncclSuccess;
      x->taken[p]++;
      cur->active = 1;
      cur->sent = 0;
      MK_CHECK(gin_check_gfd(e, &cur->gfd, p));
    }
    const gin_gfd_t* g = &cur->gfd;
    uint64_t n = g->size - cur->sent < e->chunk ? g->size - cur->sent : e->chunk;
    int last = cur->sent + n == g->size;
    int i = (peer->sendHead + peer->sendCount) % GIN_SENDS;
    char* slot = peer->sendBuf + (size_t)i * e->slotBytes;
    gin_wire_hdr_t h;
    memset(&h, 0, sizeof(h));
    h.magic = GIN_WIRE_MAGIC;
    h.ctx = (uint8_t)c;
    h.dstWin = n ? g->dstWin : 0;
    h.dstOff = g->dstOff + cur->sent;
    h.bytes = n;
    if (last && g->op & (GIN_OP_SIGNAL_INC | GIN_OP_SIGNAL_ADD)) {
      h.flags = GIN_WIRE_SIGNAL;
      h.signalId = g->signalId;
      h.signalValue = gin_signal_add(g);
    }
    memcpy(slot, &h, sizeof(h));
    MK_CHECK(gin_payload(e, g, cur->sent, n, p, slot + sizeof(h)));
    peer->sends[i] = (gin_send_t){NULL, sizeof(h) + n, 0, last, c, (g->op & GIN_OP_COUNTER) != 0, g->counterId};
    peer->sendCount++;
    cur->sent += n;
    if (last) cur->active = 0;
    *progressed = 1;
    /* Posted now, or by gin_send_retire once the plugin takes it. */
    const ncclNet_v12_t* net = e->cfg.net;
    if (peer->sendCount == 1 || peer->sends[(i + GIN_SENDS - 1) % GIN_SENDS].posted) {
      gin_send_t* s = &peer->sends[i];
      ncclResult_t r = net->isend(peer->sendComm, slot, s->bytes, GIN_TAG, peer->sendMh, NULL, &s->req);
      if (r != ncclSuccess) return MK_FAIL(r, "GIN: rank %d: sending to rank %d failed", e->cfg.rank, p);
      s->posted = s->req != NULL;
    }
  }
  return ncclSuccess;
}

static ncclResult_t gin_recv_post(gin_engine_t* e, gin_peer_t* peer, int i, int p) {
  void* data = peer->recvBuf + (size_t)i * e->slotBytes;
  size_t size = e->slotBytes;
  int tag = GIN_TAG;
  ncclResult_t r = e->cfg.net->irecv(peer->recvComm, 1, &data, &size, &tag, &peer->recvMh, NULL, &peer->recvReq[i]);
  if (r != ncclSuccess) return MK_FAIL(r, "GIN: rank %d: posting a receive from rank %d failed", e->cfg.rank, p);
  return ncclSuccess;
}

static ncclResult_t gin_apply(gin_engine_t* e, const char* msg, int got, int p) {
  gin_wire_hdr_t h;
  if (got < (int)sizeof(h))
    return MK_FAIL(ncclRemoteError, "GIN: rank %d: a %d-byte message from rank %d", e->cfg.rank, got, p);
  memcpy(&h, msg, sizeof(h));
  if (h.magic != GIN_WIRE_MAGIC || h.bytes != (uint64_t)got - sizeof(h) || h.ctx >= e->cfg.nContexts ||
      (h.flags & GIN_WIRE_SIGNAL && (int)h.signalId >= e->cfg.nSignals))
    return MK_FAIL(ncclRemoteError, "GIN: rank %d: a malformed message from rank %d (magic 0x%x, %llu of %d bytes, "
                   "context %u, signal %u)", e->cfg.rank, p, h.magic, (unsigned long long)h.bytes, got, h.ctx,
                   h.signalId);
  if (h.bytes) {
    char* dst;
    MK_CHECK(gin_window(e, h.dstWin, h.dstOff, h.bytes, p, "from", &dst));
    MK_CHECK(e->cfg.mem.to_dev(e->cfg.mem.ctx, dst, msg + sizeof(h), h.bytes));
  }
  /* The payload is in the window (to_dev returned): only now the signal. */
  if (h.flags & GIN_WIRE_SIGNAL) __atomic_fetch_add(&e->ctx[h.ctx].signalsHost[h.signalId], h.signalValue, __ATOMIC_SEQ_CST);
  return ncclSuccess;
}

/* Receives are posted in ring order and completed from the oldest, so the
 * plugin's matching order (posting order) is the order they are applied. */
static ncclResult_t gin_recv_progress(gin_engine_t* e, int p, int* progressed) {
  gin_peer_t* peer = &e->peers[p];
  for (;;) {
    while (peer->recvPosted < GIN_RECVS) {
      int i = (peer->recvHead + peer->recvPosted) % GIN_RECVS;
      MK_CHECK(gin_recv_post(e, peer, i, p));
      if (!peer->recvReq[i]) break; /* the plugin wants us back later */
      peer->recvPosted++;
    }
    if (peer->recvPosted == 0) return ncclSuccess;
    int i = peer->recvHead;
    int done = 0, got = 0;
    ncclResult_t r = e->cfg.net->test(peer->recvReq[i], &done, &got);
    if (r != ncclSuccess) return MK_FAIL(r, "GIN: rank %d: a receive from rank %d failed", e->cfg.rank, p);
    if (!done) return ncclSuccess;
    peer->recvReq[i] = NULL;
    peer->recvPosted--;
    peer->recvHead = (i + 1) % GIN_RECVS;
    MK_CHECK(gin_apply(e, peer->recvBuf + (size_t)i * e->slotBytes, got, p));
    __atomic_fetch_add(&peer->recvMsgs, 1, __ATOMIC_RELEASE);
    *progressed = 1;
  }
}

/* Nothing queued, nothing half sent, nothing in flight. */
static int gin_idle_now(gin_engine_t* e) {
  for (int p = 0; p < e->cfg.nRanks; p++) {
    if (e->peers[p].sendCount) return 0;
    for (int c = 0; c < e->cfg.nContexts; c++) {
      gin_ctx_t* x = &e->ctx[c];
      if (x->cur[p].active || (__atomic_load_n(gin_slot(e, x, p), __ATOMIC_ACQUIRE) & 1)) return 0;
    }
  }
  return 1;
}

static ncclResult_t gin_round(gin_engine_t* e, int* progressed) {
  int me = e->cfg.rank;
  for (int c = 0; c < e->cfg.nContexts; c++) MK_CHECK(gin_self(e, c, progressed));
  for (int p = 0; p < e->cfg.nRanks; p++) {
    if (p == me) continue;
    MK_CHECK(gin_send_retire(e, p, progressed));
    for (int c = 0; c < e->cfg.nContexts; c++) MK_CHECK(gin_send_new(e, c, p, progressed));
    MK_CHECK(gin_recv_progress(e, p, progressed));
  }
  return ncclSuccess;
}

static void gin_release_waiters(gin_engine_t* e) {
  size_t nSig = e->cfg.nSignals > 0 ? (size_t)e->cfg.nSignals : 1;
  size_t nCnt = e->cfg.nCounters > 0 ? (size_t)e->cfg.nCounters : 1;
  for (int c = 0; c < e->cfg.nContexts; c++) {
    for (size_t i = 0; i < nSig; i++) __atomic_fetch_add(&e->ctx[c].signalsHost[i], GIN_FAIL_RELEASE, __ATOMIC_SEQ_CST);
    for (size_t i = 0; i < nCnt; i++) __atomic_fetch_add(&e->ctx[c].countersHost[i], GIN_FAIL_RELEASE, __ATOMIC_SEQ_CST);
  }
}

/* After a failure: every descriptor retired unsent, so posting never
 * waits for a free slot; sends in flight count as done. */
static void gin_drain(gin_engine_t* e) {
  for (int p = 0; p < e->cfg.nRanks; p++) {
    gin_peer_t* peer = &e->peers[p];
    for (; peer->sendCount > 0; peer->sendCount--, peer->sendHead = (peer->sendHead + 1) % GIN_SENDS) {
      gin_send_t* s = &peer->sends[peer->sendHead];
      if (s->last) gin_retire(e, s->ctx, p, s->hasCounter, s->counterId);
    }
    for (int c = 0; c < e->cfg.nContexts; c++) {
      gin_ctx_t* x = &e->ctx[c];
      gin_gfd_t g;
      x->cur[p].active = 0; /* a descriptor cut short: its last message was never made, retired below */
      while (gin_gfd_take(gin_slot(e, x, p), &g)) x->taken[p]++;
      while (x->consumed[p] != x->taken[p]) gin_retire(e, c, p, 0, 0);
    }
  }
}

static int gin_should_stop(gin_engine_t* e) {
  return __atomic_load_n(&e->stop, __ATOMIC_ACQUIRE) ||
         (e->cfg.abortFlag && __atomic_load_n(e->cfg.abortFlag, __ATOMIC_ACQUIRE));
}

void* gin_progress_thread(void* arg) {
  gin_engine_t* e = arg;
  ncclResult_t res = e->cfg.mem.thread_start ? e->cfg.mem.thread_start(e->cfg.mem.ctx) : ncclSuccess;
  int64_t us = param_MKCCL_GIN_IDLE_SLEEP_US();
  struct timespec nap = {0, 1000 * (us < 0 ? 0 : us > 999999 ? 999999 : us)};
  int idle = 0;
  while (res == ncclSuccess && !gin_should_stop(e)) {
    int progressed = 0;
    res = gin_round(e, &progressed);
    __atomic_store_n(&e->quiet, res == ncclSuccess && gin_idle_now(e), __ATOMIC_RELEASE);
    idle = progressed ? 0 : idle + 1;
    if (idle > GIN_SPIN_ROUNDS) nanosleep(&nap, NULL);
    else if (idle > 0) sched_yield();
  }
  /* Once destroy is closing, a peer that closed first is no failure. */
  if (res != ncclSuccess && !__atomic_load_n(&e->closing, __ATOMIC_SEQ_CST)) {
    __atomic_store_n(&e->error, res, __ATOMIC_SEQ_CST);
    if (e->cfg.onFail) e->cfg.onFail(e->cfg.onFailArg, res);
    gin_release_waiters(e);
    struct timespec drainNap = {0, 100000};
    for (; !gin_should_stop(e); nanosleep(&drainNap, NULL)) gin_drain(e);
  }
  if (e->cfg.mem.thread_stop) e->cfg.mem.thread_stop(e->cfg.mem.ctx);
  return NULL;
}
