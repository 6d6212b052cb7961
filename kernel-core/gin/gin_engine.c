/* An engine's life: the memory the kernels and the thread share, one set
 * per context (queues and cis mapped into the GPU from host memory, pis in
 * device memory, signals and counters in host memory the GPU maps, so the
 * thread adds to them directly), the connections, the thread; and the
 * collective end, which first lets every rank's puts land. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "base/param.h"
#include "gin/gin_internal.h"

static void gin_ctx_free(gin_engine_t* e, gin_ctx_t* c) {
  const gin_mem_ops_t* m = &e->cfg.mem;
  free(c->cur);
  free(c->consumed);
  free(c->taken);
  if (c->dev) m->dev_free(m->ctx, c->dev);
  if (c->signalsHost) m->shared_free(m->ctx, c->signalsHost);
  if (c->countersHost) m->shared_free(m->ctx, c->countersHost);
  if (c->cisHost) m->shared_free(m->ctx, c->cisHost);
  if (c->pis) m->dev_free(m->ctx, c->pis);
  if (c->queuesHost) m->shared_free(m->ctx, c->queuesHost);
  memset(c, 0, sizeof(*c));
}

static ncclResult_t gin_ctx_alloc(gin_engine_t* e, gin_ctx_t* c) {
  const gin_mem_ops_t* m = &e->cfg.mem;
  size_t n = (size_t)e->cfg.nRanks;
  gin_gpu_ctx_t* v = &c->devView;
  v->nranks = e->cfg.nRanks;
  v->queueSize = e->queueSize;
  /* A context with no signals or counters still gets one of each, so
   * the kernels' pointers are never NULL. */
  size_t nSig = e->cfg.nSignals > 0 ? (size_t)e->cfg.nSignals : 1;
  size_t nCnt = e->cfg.nCounters > 0 ? (size_t)e->cfg.nCounters : 1;
  ncclResult_t res = m->shared_alloc(m->ctx, n * e->queueSize * GIN_GFD_BYTES, &c->queuesHost, &v->queues);
  if (res == ncclSuccess) res = m->dev_alloc(m->ctx, n * sizeof(uint32_t), (void**)&c->pis);
  if (res == ncclSuccess) res = m->shared_alloc(m->ctx, n * sizeof(uint32_t), (void**)&c->cisHost, (void**)&v->cis);
  if (res == ncclSuccess)
    res = m->shared_alloc(m->ctx, nCnt * sizeof(uint64_t), (void**)&c->countersHost, (void**)&v->counters);
  if (res == ncclSuccess)
    res = m->shared_alloc(m->ctx, nSig * sizeof(uint64_t), (void**)&c->signalsHost, (void**)&v->signals);
  if (res == ncclSuccess) res = m->dev_alloc(m->ctx, sizeof(*v), (void**)&c->dev);
  v->pis = c->pis;
  if (res == ncclSuccess) res = m->to_dev(m->ctx, c->dev, v, sizeof(*v));
  if (res == ncclSuccess) {
    c->taken = calloc(n, sizeof(uint32_t));
    c->consumed = calloc(n, sizeof(uint32_t));
    c->cur = calloc(n, sizeof(gin_cur_t));
    if (!c->taken || !c->consumed || !c->cur) res = MK_FAIL(ncclSystemError, "GIN: out of memory for %zu peers", n);
  }
  if (res != ncclSuccess) gin_ctx_free(e, c);
  return res;
}

static void gin_engine_free(gin_engine_t* e) {
  const gin_mem_ops_t* m = &e->cfg.mem;
  gin_conn_close(e);
  free(e->selfBuf);
  if (e->shadows) m->dev_free(m->ctx, e->shadows);
  for (int c = e->cfg.nContexts - 1; c >= 0; c--) gin_ctx_free(e, &e->ctx[c]);
  free(e);
}

ncclResult_t gin_engine_create(const gin_config_t* cfg, gin_engine_t** out) {
  if (cfg->nContexts < 1 || cfg->nContexts > GIN_MAX_CONTEXTS || cfg->nSignals < 0 || cfg->nCounters < 0 ||
      cfg->nSignals > 0xffff || cfg->nCounters > 0xffff)
    return MK_FAIL(ncclInvalidArgument, "GIN: %d contexts of %d signals and %d counters (1..%d contexts, at most 65535 "
                   "of each: the descriptors carry 16-bit ids)", cfg->nContexts, cfg->nSignals, cfg->nCounters,
                   GIN_MAX_CONTEXTS);
  int64_t q = param_MKCCL_GIN_QUEUE_SIZE(), chunk = param_MKCCL_GIN_CHUNK_BYTES();
  if (q < 2 || q > (1 << 20) || (q & (q - 1)))
    return MK_FAIL(ncclInvalidArgument, "GIN: MKCCL_GIN_QUEUE_SIZE %lld is not a power of two in 2..2^20", (long long)q);
  if (chunk < 64 || chunk > (1ll << 30))
    return MK_FAIL(ncclInvalidArgument, "GIN: MKCCL_GIN_CHUNK_BYTES %lld is not in 64..2^30", (long long)chunk);
  gin_engine_t* e = calloc(1, sizeof(*e));
  if (!e) return MK_FAIL(ncclSystemError, "GIN: out of memory");
  e->cfg = *cfg;
  e->queueSize = (uint32_t)q;
  e->chunk = (size_t)chunk;
  e->slotBytes = sizeof(gin_wire_hdr_t) + e->chunk;
  ncclResult_t res = ncclSuccess;
  int c = 0;
  for (; c < cfg->nContexts && res == ncclSuccess; c++) res = gin_ctx_alloc(e, &e->ctx[c]);
  if (res != ncclSuccess) e->cfg.nContexts = c - 1; /* the failed one freed itself */
  size_t nSig = cfg->nSignals > 0 ? (size_t)cfg->nSignals : 1;
  if (res == ncclSuccess)
    res = cfg->mem.dev_alloc(cfg->mem.ctx, (size_t)cfg->nContexts * nSig * sizeof(uint64_t), (void**)&e->shadows);
  if (res == ncclSuccess && !(e->selfBuf = malloc(e->chunk))) res = MK_FAIL(ncclSystemError, "GIN: out of memory");
  if (res == ncclSuccess) res = gin_conn_setup(e);
  if (res == ncclSuccess) {
    if (pthread_create(&e->thread, NULL, gin_progress_thread, e) != 0)
      res = MK_FAIL(ncclSystemError, "GIN: starting the proxy thread of rank %d failed", cfg->rank);
    else
      e->threadRunning = 1;
  }
  if (res != ncclSuccess) {
    gin_engine_free(e);
    return res;
  }
  *out = e;
  return ncclSuccess;
}

void* gin_engine_handle(const gin_engine_t* e, int c) { return e->ctx[c].dev; }

uint64_t* gin_engine_shadows(const gin_engine_t* e) { return e->shadows; }

void gin_engine_view(const gin_engine_t* e, int c, gin_view_t* out) {
  const gin_ctx_t* x = &e->ctx[c];
  *out = (gin_view_t){x->queuesHost, e->queueSize, x->pis, x->cisHost, x->countersHost, x->signalsHost};
}

static double gin_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Until done(e, p) for every peer p, the thread failed, the abort flag, or
 * MKCCL_TIMEOUT (0: no end but the abort flag). */
static ncclResult_t gin_engine_wait(gin_engine_t* e, int (*done)(gin_engine_t*, int, const uint64_t*),
                                    const uint64_t* arg, const char* what) {
  int64_t timeout = param_MKCCL_TIMEOUT();
  double start = gin_now();
  for (;;) {
    int all = 1;
    for (int p = 0; p < e->cfg.nRanks && all; p++) all = done(e, p, arg);
    if (all) return ncclSuccess;
    ncclResult_t err = __atomic_load_n(&e->error, __ATOMIC_ACQUIRE);
    if (err != ncclSuccess) return err;
    if (e->cfg.abortFlag && __atomic_load_n(e->cfg.abortFlag, __ATOMIC_ACQUIRE))
      return MK_FAIL(ncclInvalidUsage, "GIN: rank %d aborted while waiting for %s", e->cfg.rank, what);
    if (timeout > 0 && gin_now() - start > (double)timeout)
      return MK_FAIL(ncclRemoteError, "GIN: rank %d waited %llds for %s (MKCCL_TIMEOUT)", e->cfg.rank,
                     (long long)timeout, what);
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
  }
}

static int gin_sends_done(gin_engine_t* e, int p, const uint64_t* arg) {
  (void)p, (void)arg;
  return __atomic_load_n(&e->quiet, __ATOMIC_ACQUIRE);
}

/* arg: [nRanks][nRanks] messages rank i sent rank j. */
static int gin_recvs_done(gin_engine_t* e, int p, const uint64_t* sent) {
  int me = e->cfg.rank, n = e->cfg.nRanks;
  return p == me || __atomic_load_n(&e->peers[p].recvMsgs, __ATOMIC_ACQUIRE) >= sent[(size_t)p * n + me];
}

ncclResult_t gin_engine_destroy(gin_engine_t* e) {
  if (!e) return ncclSuccess;
  int n = e->cfg.nRanks, me = e->cfg.rank;
  ncclResult_t res = gin_engine_wait(e, gin_sends_done, NULL, "its puts to leave");
  uint64_t* sent = calloc((size_t)n * n, sizeof(uint64_t));
  if (!sent && res == ncclSuccess) res = MK_FAIL(ncclSystemError, "GIN: out of memory");
  if (sent) {
    /* Every rank joins the exchange, even one that failed, so none waits on it. */
    for (int p = 0; p < n; p++) sent[(size_t)me * n + p] = __atomic_load_n(&e->peers[p].sentMsgs, __ATOMIC_ACQUIRE);
    ncclResult_t r = bootstrap_allgather(e->cfg.bootstrap, sent, (size_t)n * sizeof(uint64_t));
    if (r != ncclSuccess && res == ncclSuccess) res = MK_FAIL(r, "GIN: rank %d: exchanging put counts failed", me);
    if (r == ncclSuccess && res == ncclSuccess) res = gin_engine_wait(e, gin_recvs_done, sent, "the peers' puts to land");
    free(sent);
  }
  /* A failure from now on is a peer closing first: not the user's. */
  __atomic_store_n(&e->closing, 1, __ATOMIC_SEQ_CST);
  ncclResult_t err = __atomic_load_n(&e->error, __ATOMIC_SEQ_CST);
  if (res == ncclSuccess) res = err;
  ncclResult_t r = bootstrap_barrier(e->cfg.bootstrap);
  if (r != ncclSuccess && res == ncclSuccess) res = MK_FAIL(r, "GIN: rank %d: the closing barrier failed", me);
  __atomic_store_n(&e->stop, 1, __ATOMIC_RELEASE);
  if (e->threadRunning) pthread_join(e->thread, NULL);
  gin_engine_free(e);
  return res;
}
