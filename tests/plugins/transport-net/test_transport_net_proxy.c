/* transport-net's proxy state machine against a scripted fake net plugin
 * (in process): connect handshakes that take several calls, a plugin that
 * is sometimes busy (NULL requests), completions after several tests,
 * completions out of post order (as libfabric gives when an eager message
 * overtakes a rendezvous one) while two ops share a connection, grouped
 * receives on shared comms, iflush, irecvConsumed, and errors from test.
 * The executor is simulated step by step on both sides, every byte is
 * checked, and head and tail must never move backwards. Each scenario runs
 * with per-connection buffers and with shared buffers (OFFSET mode: the
 * simulated executor then writes and reads where connFifo says, and may
 * write a step only once head, counting grants, is past it). */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "net/nccl_net.h"
#include "transport/mkccl_conn_fifo_v1.h"
#include "transport/mkccl_transport_v1.h"

/* ---- the fake net: messages queued per (comm pair, tag) ---------------- */
#define MAXMSG 256
typedef struct {
  int tag;
  int taken; /* matched to a receive, data not delivered yet */
  size_t size;
  char data[4096];
} msg_t;
typedef struct {
  msg_t q[MAXMSG];
  int head, tail;
} wire_t;
static wire_t wire;
static int connectCalls, acceptCalls, busyEvery, testDelay, failAfter, tests;
static int slowEvery, slowDelay, reqCount; /* every slowEvery-th request completes slowDelay tests late */
static int irecvCalls, groupedIrecvs, iflushCalls, consumedCalls, consumedGroups;
static ncclNetDeviceHandle_v12_t offloadHandle;
static int askConsumed;

typedef struct {
  int kind; /* 0 send, 1 recv, 2 flush */
  int n;
  void* data[8];
  size_t sizes[8];
  int tags[8];
  int polls;
  int slow;
  int msg[8]; /* receive: the wire slot matched to each member, -1 none yet */
} req_t;

/* Receives not yet complete, in post order: messages match them in that
 * order (per tag), as a real plugin's tag matching does, whatever order
 * their completions are then reported in. */
#define MAXREQ 512
static req_t* pending[MAXREQ];
static int npending;

/* Every request not freed yet: after a failed test the transport abandons
 * its requests (the ABI lets it), and a real plugin frees them when their
 * comms close; the fake does that at the end of each scenario. */
static req_t* live[MAXREQ];
static int nlive;

static req_t* req_new(int kind) {
  req_t* r = calloc(1, sizeof(*r));
  CHECK(r != NULL);
  CHECK(nlive < MAXREQ);
  live[nlive++] = r;
  r->kind = kind;
  r->slow = slowEvery && ++reqCount % slowEvery == 0;
  for (int i = 0; i < 8; i++) r->msg[i] = -1;
  return r;
}

static void req_free(req_t* r) {
  int i = 0;
  while (i < nlive && live[i] != r) i++;
  CHECK(i < nlive);
  live[i] = live[--nlive];
  free(r);
}

static void req_free_all(void) {
  while (nlive) req_free(live[nlive - 1]);
}

static void match_pending(void) {
  for (int p = 0; p < npending; p++) {
    req_t* r = pending[p];
    for (int i = 0; i < r->n; i++) {
      for (int k = wire.head; r->msg[i] < 0 && k < wire.tail; k++) {
        msg_t* m = &wire.q[k % MAXMSG];
        if (m->size == (size_t)-1 || m->taken || m->tag != r->tags[i]) continue;
        m->taken = 1;
        r->msg[i] = k;
      }
    }
  }
}

static ncclResult_t f_init(void** ctx, uint64_t id, ncclNetCommConfig_v12_t* c, ncclDebugLogger_t l, ncclProfilerCallback_t p) {
  (void)id, (void)c, (void)l, (void)p;
  *ctx = (void*)1;
  return ncclSuccess;
}
static ncclResult_t f_devices(int* n) { *n = 1; return ncclSuccess; }
static ncclResult_t f_props(int dev, ncclNetProperties_v12_t* p) {
  (void)dev;
  memset(p, 0, sizeof(*p));
  p->name = "fake";
  p->maxRecvs = 8;
  p->ptrSupport = NCCL_PTR_HOST;
  return ncclSuccess;
}
static ncclResult_t f_listen(void* ctx, int dev, void* handle, void** listen) {
  (void)ctx, (void)dev;
  memset(handle, 0x5a, 8);
  *listen = malloc(1);
  return ncclSuccess;
}
/* Comms come up on the third call. */
static ncclResult_t f_connect(void* ctx, int dev, void* handle, void** comm, ncclNetDeviceHandle_v12_t** dh) {
  (void)ctx, (void)dev, (void)handle, (void)dh;
  *comm = ++connectCalls % 3 == 0 ? malloc(1) : NULL;
  return ncclSuccess;
}
static ncclResult_t f_accept(void* listen, void** comm, ncclNetDeviceHandle_v12_t** dh) {
  (void)listen;
  *comm = ++acceptCalls % 3 == 0 ? malloc(1) : NULL;
  if (*comm && askConsumed && dh) *dh = &offloadHandle;
  return ncclSuccess;
}
static ncclResult_t f_regmr(void* c, void* d, size_t s, int t, void** mh) { (void)c, (void)d, (void)s, (void)t; *mh = (void*)2; return ncclSuccess; }
static ncclResult_t f_deregmr(void* c, void* mh) { (void)c, (void)mh; return ncclSuccess; }
static int busy(void) { static int k; return busyEvery && ++k % busyEvery == 0; }
static ncclResult_t f_isend(void* comm, void* data, size_t size, int tag, void* mh, void* ph, void** request) {
  (void)comm, (void)mh, (void)ph;
  *request = NULL;
  if (busy()) return ncclSuccess;
  CHECK(size <= 4096);
  CHECK(wire.tail - wire.head < MAXMSG);
  msg_t* m = &wire.q[wire.tail++ % MAXMSG];
  m->tag = tag;
  m->taken = 0;
  m->size = size;
  memcpy(m->data, data, size);
  *request = req_new(0);
  return ncclSuccess;
}
static ncclResult_t f_irecv(void* comm, int n, void** data, size_t* sizes, int* tags, void** mh, void** ph, void** request) {
  (void)comm, (void)mh, (void)ph;
  *request = NULL;
  if (busy()) return ncclSuccess;
  CHECK(n >= 1 && n <= 8);
  irecvCalls++;
  if (n > 1) groupedIrecvs++;
  req_t* r = req_new(1);
  r->n = n;
  for (int i = 0; i < n; i++) r->data[i] = data[i], r->sizes[i] = sizes[i], r->tags[i] = tags[i];
  CHECK(npending < MAXREQ);
  pending[npending++] = r;
  *request = r;
  return ncclSuccess;
}
static ncclResult_t f_iflush(void* comm, int n, void** data, int* sizes, void** mh, void** request) {
  (void)comm, (void)n, (void)data, (void)sizes, (void)mh;
  iflushCalls++;
  *request = req_new(2);
  return ncclSuccess;
}
/* A receive completes once all its members matched and its delay passed;
 * only then does the data land in its buffers (a late one stays unwritten). */
static ncclResult_t f_test(void* request, int* done, int* sizes) {
  req_t* r = request;
  if (failAfter && ++tests > failAfter) return ncclSystemError;
  *done = 0;
  match_pending();
  if (++r->polls <= testDelay + (r->slow ? slowDelay : 0)) return ncclSuccess;
  if (r->kind == 1) {
    for (int i = 0; i < r->n; i++)
      if (r->msg[i] < 0) return ncclSuccess;
    for (int i = 0; i < r->n; i++) {
      msg_t* m = &wire.q[r->msg[i] % MAXMSG];
      CHECK(m->size <= r->sizes[i]);
      memcpy(r->data[i], m->data, m->size);
      r->sizes[i] = m->size;
      m->size = (size_t)-1;
    }
    int p = 0;
    while (p < npending && pending[p] != r) p++;
    CHECK(p < npending);
    memmove(&pending[p], &pending[p + 1], (size_t)(--npending - p) * sizeof(pending[0]));
    while (wire.head < wire.tail && wire.q[wire.head % MAXMSG].size == (size_t)-1) wire.head++;
    if (sizes)
      for (int i = 0; i < r->n; i++) sizes[i] = (int)r->sizes[i];
  }
  *done = 1;
  if (!(r->kind == 1 && askConsumed)) req_free(r); /* kept until irecvConsumed */
  return ncclSuccess;
}
static ncclResult_t f_close(void* c) { free(c); return ncclSuccess; }
static ncclResult_t f_consumed(void* comm, int n, void* request) {
  (void)comm;
  consumedCalls++;
  if (n > 1) consumedGroups++;
  req_free(request);
  return ncclSuccess;
}
static ncclResult_t f_finalize(void* ctx) { (void)ctx; return ncclSuccess; }

static const ncclNet_v12_t fakeNet = {"fake", f_init, f_devices, f_props, f_listen, f_connect, f_accept, f_regmr,
                                      NULL, f_deregmr, f_isend, f_irecv, f_iflush, f_test, f_close, f_close,
                                      f_close, NULL, f_consumed, NULL, f_finalize, NULL};

/* ---- services ---- */
static int forceFlush, sharedBuffers;
static ncclResult_t s_alloc(void* ctx, size_t b, void** p) { (void)ctx; *p = calloc(1, b); return *p ? ncclSuccess : ncclSystemError; }
static ncclResult_t s_free(void* ctx, void* p) { (void)ctx; free(p); return ncclSuccess; }
static const void* s_net(void* ctx, void** netCtx) { (void)ctx; *netCtx = (void*)1; return &fakeNet; }
static int s_param(const char* name, int64_t* v) {
  if (!strcmp(name, "MKCCL_NET_FORCE_FLUSH")) { *v = forceFlush; return 0; }
  if (!strcmp(name, "NCCL_NET_SHARED_COMMS")) { *v = 1; return 0; }
  if (!strcmp(name, "NCCL_NET_SHARED_BUFFERS")) { *v = sharedBuffers; return 0; }
  return -1;
}
static void s_log(ncclDebugLogLevel l, unsigned long f, const char* file, int line, const char* fmt, ...) {
  (void)l, (void)f, (void)file, (void)line, (void)fmt;
}

/* Three channels, so a grouped receive has a member between its first and
 * last; the executor of the middle one lags (it consumes every 7th round),
 * so the others finish first. */
#define NCH 3
#define LAGGING_CHANNEL 1
#define STEP 512
static const mkcclTransport_v1* T;

typedef struct {
  void* conn;
  mkcclConnInfo_v1 info;
  uint64_t step;
} side_t;

/* Connect NCH channel pairs (p2p connection index: shared comms). */
static void connect_all(void* tctx, side_t* snd, side_t* rcv) {
  mkcclPeer_v1 r0 = {0}, r1 = {0};
  r0.rank = 0;
  r1.rank = 1;
  char infoS[NCH][MKCCL_CONNECT_INFO_BYTES], infoR[NCH][MKCCL_CONNECT_INFO_BYTES];
  for (int c = 0; c < NCH; c++) {
    mkcclConnSetup_v1 a = {&r0, &r1, c, 1, 0, {0, 0, STEP * MKCCL_STEPS}, 1};
    CHECK_NCCL(T->send.setup(tctx, &a, infoS[c], &snd[c].conn));
    mkcclConnSetup_v1 b = {&r1, &r0, c, 1, 0, {0, 0, STEP * MKCCL_STEPS}, 1};
    CHECK_NCCL(T->recv.setup(tctx, &b, infoR[c], &rcv[c].conn));
  }
  int left = 2 * NCH, rounds = 0;
  int doneS[NCH] = {0}, doneR[NCH] = {0};
  while (left && rounds++ < 100) {
    for (int c = 0; c < NCH; c++) {
      ncclResult_t res;
      if (!doneS[c] && (res = T->send.connect(snd[c].conn, infoR[c], &snd[c].info)) != ncclInProgress) {
        CHECK_NCCL(res);
        doneS[c] = 1, left--;
      }
      if (!doneR[c] && (res = T->recv.connect(rcv[c].conn, infoS[c], &rcv[c].info)) != ncclInProgress) {
        CHECK_NCCL(res);
        doneR[c] = 1, left--;
      }
    }
  }
  CHECK_EQ_INT(left, 0);
  CHECK(snd[0].info.flags & MKCCL_CONN_PROXY);
}

static mkcclProxyOp_v1* make_op(side_t* sides, uint64_t nsteps, int sliceSteps) {
  mkcclProxyOp_v1* op = calloc(1, sizeof(*op));
  op->state = MKCCL_PROXY_OP_READY;
  op->chunkSteps = sliceSteps;
  op->sliceSteps = sliceSteps;
  op->nsubs = NCH;
  for (int c = 0; c < NCH; c++) {
    op->subs[c].conn = sides[c].conn;
    op->subs[c].nsteps = nsteps;
    op->subs[c].channelId = c;
  }
  return op;
}

static unsigned char pattern(int c, uint64_t step, int i) { return (unsigned char)(c * 31 + step * 7 + (uint64_t)i); }

static int offsetSeen; /* receive steps that came in OFFSET mode */

/* The executor's rules (device/host/host_prims.c): may the send slice
 * [step, step + sl) be written, and where; where did a receive land. */
static int send_room(const side_t* s, uint64_t step, int sl) {
  if (s->info.flags & MKCCL_CONN_SHARED) return conn_fifo_load(s->info.head) >= step + (uint64_t)sl;
  return conn_fifo_can_produce(s->info.head, step + (uint64_t)sl - 1);
}
static char* send_buf(const side_t* s, uint64_t step) {
  int slot = conn_fifo_slot(step);
  if (s->info.flags & MKCCL_CONN_SHARED) return s->info.buffs[MKCCL_PROTO_SIMPLE] + s->info.connFifo[slot].offset;
  return s->info.buffs[MKCCL_PROTO_SIMPLE] + (size_t)slot * STEP;
}
static const char* recv_buf(const side_t* r, uint64_t step) {
  int slot = conn_fifo_slot(step);
  if ((r->info.flags & MKCCL_CONN_USE_FIFO) && r->info.connFifo[slot].mode == MKCCL_MODE_OFFSET) {
    offsetSeen++;
    return r->info.buffs[MKCCL_PROTO_SIMPLE] + r->info.connFifo[slot].offset;
  }
  return r->info.buffs[MKCCL_PROTO_SIMPLE] + (size_t)slot * STEP;
}

/* Run nops ops back to back on every channel, all handed to the proxy at
 * once (its active list holds them all and progresses them in post order)
 * while the executor goes through them in order; returns the first error. */
#define MAXOPS 4
static ncclResult_t run_ops(void* tctx, side_t* snd, side_t* rcv, int nops, const uint64_t* nsteps, const int* slices) {
  CHECK(nops >= 1 && nops <= MAXOPS);
  mkcclProxyOp_v1 *so[MAXOPS], *ro[MAXOPS];
  for (int k = 0; k < nops; k++) {
    so[k] = make_op(snd, nsteps[k], slices[k]);
    ro[k] = make_op(rcv, nsteps[k], slices[k]);
  }
  int sop[NCH], rop[NCH]; /* the op the executor is in, per side */
  uint64_t sent[NCH], rcvd[NCH], lastHead[NCH], lastTail[NCH];
  for (int c = 0; c < NCH; c++) {
    snd[c].step = (snd[c].step + slices[0] - 1) / slices[0] * slices[0];
    rcv[c].step = (rcv[c].step + slices[0] - 1) / slices[0] * slices[0];
    sop[c] = rop[c] = 0;
    sent[c] = rcvd[c] = 0;
    lastHead[c] = conn_fifo_load(snd[c].info.head);
    lastTail[c] = conn_fifo_load(rcv[c].info.tail);
  }
  ncclResult_t res = ncclSuccess;
  int left = 1;
  for (int round = 0; round < 100000 && left; round++) {
    for (int c = 0; c < NCH; c++) {
      side_t* s = &snd[c];
      int sl = sop[c] < nops ? slices[sop[c]] : 0;
      if (sl && send_room(s, s->step, sl)) {
        char* buf = send_buf(s, s->step);
        int len = (int)((s->step % 3) + 1) * 100;
        for (int i = 0; i < len; i++) buf[i] = (char)pattern(c, s->step, i);
        conn_fifo_publish(s->info.connFifo, s->info.tail, s->step, sl, len);
        s->step += (uint64_t)sl;
        sent[c] += (uint64_t)sl;
        if (sent[c] == nsteps[sop[c]] && ++sop[c] < nops) {
          sent[c] = 0;
          s->step = (s->step + slices[sop[c]] - 1) / slices[sop[c]] * slices[sop[c]];
        }
      }
      side_t* r = &rcv[c];
      sl = rop[c] < nops ? slices[rop[c]] : 0;
      if (sl && (c != LAGGING_CHANNEL || round % 7 == 0) && conn_fifo_can_consume(r->info.tail, r->step + sl - 1)) {
        const char* buf = recv_buf(r, r->step);
        int len = (int)((r->step % 3) + 1) * 100;
        for (int i = 0; i < len; i++) CHECK_EQ_INT((unsigned char)buf[i], pattern(c, r->step, i));
        conn_fifo_release(NULL, r->info.head, r->step, sl);
        r->step += (uint64_t)sl;
        rcvd[c] += (uint64_t)sl;
        if (rcvd[c] == nsteps[rop[c]] && ++rop[c] < nops) {
          rcvd[c] = 0;
          r->step = (r->step + slices[rop[c]] - 1) / slices[rop[c]] * slices[rop[c]];
        }
      }
      /* The executor's view only grows. */
      uint64_t head = conn_fifo_load(s->info.head), tail = conn_fifo_load(r->info.tail);
      CHECK_MSG(head >= lastHead[c], "channel %d: send head went back from %lu to %lu", c, (unsigned long)lastHead[c],
                (unsigned long)head);
      CHECK_MSG(tail >= lastTail[c], "channel %d: recv tail went back from %lu to %lu", c, (unsigned long)lastTail[c],
                (unsigned long)tail);
      lastHead[c] = head;
      lastTail[c] = tail;
    }
    left = 0;
    for (int k = 0; k < nops && res == ncclSuccess; k++) {
      if (so[k]->state != MKCCL_PROXY_OP_DONE && (res = T->send.proxyProgress(tctx, so[k])) != ncclSuccess) break;
      if (ro[k]->state != MKCCL_PROXY_OP_DONE && (res = T->recv.proxyProgress(tctx, ro[k])) != ncclSuccess) break;
      left += (so[k]->state != MKCCL_PROXY_OP_DONE) + (ro[k]->state != MKCCL_PROXY_OP_DONE);
    }
    if (res != ncclSuccess) break;
  }
  if (res == ncclSuccess) {
    for (int k = 0; k < nops; k++) {
      CHECK_EQ_INT(so[k]->state, MKCCL_PROXY_OP_DONE);
      CHECK_EQ_INT(ro[k]->state, MKCCL_PROXY_OP_DONE);
    }
    for (int c = 0; c < NCH; c++) CHECK(sop[c] == nops && rop[c] == nops);
  }
  for (int k = 0; k < nops; k++) {
    free(so[k]);
    free(ro[k]);
  }
  return res;
}

/* One op of nsteps on every channel. */
static ncclResult_t run(void* tctx, side_t* snd, side_t* rcv, uint64_t nsteps, int sliceSteps) {
  return run_ops(tctx, snd, rcv, 1, &nsteps, &sliceSteps);
}

static void scenario(const char* lib, int shared, int flush, int consumed, int busyN, int delay, int slowN) {
  sharedBuffers = shared;
  offsetSeen = 0;
  forceFlush = flush;
  askConsumed = consumed;
  offloadHandle.needsProxyProgress = 1;
  busyEvery = busyN;
  testDelay = delay;
  slowEvery = slowN;
  slowDelay = 25;
  irecvCalls = groupedIrecvs = iflushCalls = consumedCalls = consumedGroups = 0;
  mkcclTransportServices_v1 sv;
  memset(&sv, 0, sizeof(sv));
  sv.size = sizeof(sv);
  sv.log = s_log;
  sv.hostAlloc = sv.deviceAlloc = s_alloc;
  sv.hostFree = sv.deviceFree = s_free;
  sv.net = s_net;
  sv.paramInt64 = s_param;
  sv.nRanks = 2;
  sv.cudaDev = -1;
  void* tctx;
  CHECK_NCCL(T->init(&sv, &tctx));
  side_t snd[NCH], rcv[NCH];
  memset(snd, 0, sizeof(snd));
  memset(rcv, 0, sizeof(rcv));
  connect_all(tctx, snd, rcv);
  /* Shared buffers: one pool per channel and direction, 16 steps each,
   * in place of each connection's 8 (p2p slices are one step). */
  mkcclTransportStats_v1 st = {sizeof(st), 0, 0, 0, 0};
  CHECK(T->size >= offsetof(mkcclTransport_v1, stats) + sizeof(T->stats) && T->stats);
  CHECK_NCCL(T->stats(tctx, &st));
  CHECK_EQ_INT(st.conns, 2 * NCH);
  CHECK_EQ_INT(st.pools, shared ? 2 * NCH : 0);
  CHECK(st.stagingBytes == (uint64_t)2 * NCH * STEP * (shared ? MKCCL_SHARED_STEPS : MKCCL_STEPS));
  CHECK(!!(snd[0].info.flags & MKCCL_CONN_SHARED) == shared);
  int wide = shared ? 1 : 2;
  /* Several ops back to back on the same connections (steps continue). */
  CHECK_NCCL(run(tctx, snd, rcv, 20, 1));
  CHECK_NCCL(run(tctx, snd, rcv, 7, 1));
  CHECK_NCCL(run(tctx, snd, rcv, 12, wide));
  /* Three ops in flight at once on the same connections. */
  const uint64_t steps[3] = {6, 4, 10};
  const int slices[3] = {1, 1, wide};
  CHECK_NCCL(run_ops(tctx, snd, rcv, 3, steps, slices));
  /* Every receive step came through a pool slot, and the proxy counted them
   * (a send and a receive grant per step). */
  const int moved = NCH * (20 + 7 + 12 + 6 + 4 + 10);
  CHECK_NCCL(T->stats(tctx, &st));
  CHECK_EQ_INT(offsetSeen, shared ? moved : 0);
  CHECK(st.offsetSteps == (uint64_t)(shared ? 2 * moved : 0));
  CHECK(groupedIrecvs > 0 && groupedIrecvs == irecvCalls); /* both channels always posted together */
  if (flush) CHECK(iflushCalls > 0 && iflushCalls == irecvCalls);
  else CHECK_EQ_INT(iflushCalls, 0);
  if (consumed)
    CHECK_MSG(consumedCalls == irecvCalls && consumedGroups == consumedCalls, "irecvConsumed %d (grouped %d) for %d irecv", consumedCalls, consumedGroups, irecvCalls);
  else CHECK_EQ_INT(consumedCalls, 0);
  /* A failing plugin: the error comes out of progress, nothing hangs. */
  failAfter = 5;
  tests = 0;
  CHECK_EQ_INT(run(tctx, snd, rcv, 20, 1), ncclSystemError);
  failAfter = 0;
  slowEvery = 0;
  npending = 0; /* the failed run's receives were dropped, not completed */
  for (int c = 0; c < NCH; c++) {
    CHECK_NCCL(T->send.free(snd[c].conn));
    CHECK_NCCL(T->recv.free(rcv[c].conn));
  }
  CHECK_NCCL(T->finalize(tctx));
  req_free_all();
  wire.head = wire.tail = 0;
  (void)lib;
}

int main(int argc, char** argv) {
  CHECK(argc > 1);
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  CHECK_MSG(h != NULL, "%s", dlerror());
  T = dlsym(h, "mkcclTransportPlugin_v1");
  CHECK(T && T->abiVersion == MKCCL_TRANSPORT_ABI_V1 && !strcmp(T->name, "net"));
  for (int shared = 0; shared < 2; shared++) {
    scenario(argv[1], shared, 0, 0, 0, 0, 0);
    scenario(argv[1], shared, 0, 0, 0, 0, 3);
    scenario(argv[1], shared, 1, 0, 3, 2, 4);
    scenario(argv[1], shared, 0, 1, 5, 1, 5);
    scenario(argv[1], shared, 1, 1, 2, 3, 2);
  }
  return 0;
}
