/* The GIN proxy engine driven from host memory, as a GPU would drive it:
 * ranks as processes, host communicators over the net plugin; each rank
 * writes descriptors into its queues the way NVIDIA's inline device code
 * does (gin_gfd_write, checked against NVIDIA's bits by the layout test)
 * and checks what the proxies make of them: puts that land at the offset
 * in the next rank's window, cut into several messages, before their
 * signal; inline values; signal-only barriers; puts to itself; counters
 * and consumer indices of local completion; every context apart.
 * Case "fail": rank 0's thread fails on a put naming no window; the
 * communicator's async error says so, every wait ends, later posts never
 * block, and destroy returns the failure while the others end cleanly. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/window.h"
#include "check.h"
#include "comm/comm.h"
#include "gin/gin.h"
#include "gin/gin_mem.h"
#include "ranks.h"
#include "ranks_id.h"

#define NRANKS 3
#define CONTEXTS 2
#define ITERS 6
#define BLOCK (3 * 4096 + 200) /* 4 messages of MKCCL_GIN_CHUNK_BYTES=4096 */
#define SIG_RING 1
#define SIG_VALUE 2
#define SIG_BARRIER 0
#define SIG_SELF 3

typedef struct {
  gin_view_t v[CONTEXTS];
  int nRanks;
} gpu_t;

/* What rank r puts at element i in iteration it: all three told apart. */
static uint32_t pattern(int r, int i, int it) { return (uint32_t)r << 24 ^ (uint32_t)it << 16 ^ (uint32_t)i * 2654435761u; }

static void post(gpu_t* g, int c, int peer, const gin_gfd_t* gfd) {
  gin_view_t* v = &g->v[c];
  uint32_t idx = v->pis[peer]++;
  /* The GPU waits for a free slot: consumed >= idx - queueSize + 1. */
  time_t start = time(NULL);
  while (idx - __atomic_load_n(&v->cis[peer], __ATOMIC_ACQUIRE) >= v->queueSize) CHECK(time(NULL) - start < 60);
  volatile uint64_t* slot = v->queues + ((size_t)peer * v->queueSize + (idx & (v->queueSize - 1))) * GIN_GFD_QWORDS;
  gin_gfd_write(slot, gfd);
}

static void wait_u64(volatile uint64_t* p, uint64_t least, const char* what) {
  time_t start = time(NULL);
  while (__atomic_load_n(p, __ATOMIC_ACQUIRE) < least) {
    if (time(NULL) - start > 60) {
      fprintf(stderr, "waited 60s for %s to reach %llu (it is %llu)\n", what, (unsigned long long)least,
              (unsigned long long)*p);
      CHECK(0);
    }
  }
}

/* flush: every descriptor of context c taken and its source consumed. */
static void flush(gpu_t* g, int c) {
  for (int p = 0; p < g->nRanks; p++) {
    time_t start = time(NULL);
    while (__atomic_load_n(&g->v[c].cis[p], __ATOMIC_ACQUIRE) != g->v[c].pis[p]) CHECK(time(NULL) - start < 60);
  }
}

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  ncclComm_t comm = ranks_comm_init(rank, n);
  if (!comm->dp.net.api) SKIP("no net plugin bound to a host communicator");
  uint32_t* src = calloc(BLOCK, 1);
  uint32_t* dst = calloc(ITERS * BLOCK + 64, 1);
  ncclWindow_t srcWin, dstWin;
  CHECK_NCCL(ncclCommWindowRegister(comm, src, BLOCK, &srcWin, NCCL_WIN_DEFAULT));
  CHECK_NCCL(ncclCommWindowRegister(comm, dst, ITERS * BLOCK + 64, &dstWin, NCCL_WIN_DEFAULT));
  uint64_t srcH = api_window_find(comm, srcWin)->ginHandle, dstH = api_window_find(comm, dstWin)->ginHandle;
  CHECK(srcH != dstH && srcH != 0);

  gin_config_t cfg = {.rank = rank, .nRanks = n, .bootstrap = comm->bootstrap, .net = comm->dp.net.api,
                      .netCtx = comm->dp.net.context, .netDev = comm->nNetDevs > 0 ? comm->netDevs[0] : 0,
                      .abortFlag = comm->abortFlag, .nContexts = CONTEXTS, .nSignals = 4, .nCounters = 2,
                      .winFind = api_window_gin_find, .winFindArg = comm};
  gin_mem_host(&cfg.mem);
  gin_engine_t* e = NULL;
  CHECK_NCCL(gin_engine_create(&cfg, &e));
  gpu_t g = {.nRanks = n};
  for (int c = 0; c < CONTEXTS; c++) gin_engine_view(e, c, &g.v[c]);

  int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  const size_t words = BLOCK / 4;
  for (int it = 1; it <= ITERS; it++) {
    int c = it % CONTEXTS;
    /* The previous iteration's source may be overwritten only once its
     * put consumed it (flush). */
    flush(&g, c ^ 1);
    for (size_t i = 0; i < words; i++) src[i] = pattern(rank, (int)i, it);
    /* A block per iteration: nothing orders a fast rank's next put after
     * its target's check of this one but a barrier. */
    size_t half = (size_t)(it - 1) * BLOCK;
    gin_gfd_t put = {GIN_OP_PUT | GIN_OP_SIGNAL_ADD | GIN_OP_COUNTER, BLOCK, 0, srcH, half, dstH, 0, 1, SIG_RING,
                     (uint64_t)it};
    post(&g, c, next, &put);
    /* The signal sums 1..it of the puts of this context so far. */
    uint64_t want = 0;
    for (int k = it; k >= 1; k -= CONTEXTS) want += (uint64_t)k;
    wait_u64(&g.v[c].signals[SIG_RING], want, "the ring's signal");
    const uint32_t* got = (const uint32_t*)((const char*)dst + half);
    for (size_t i = 0; i < words; i++)
      if (got[i] != pattern(prev, (int)i, it)) {
        fprintf(stderr, "rank %d iteration %d element %zu: 0x%08x, rank %d put 0x%08x\n", rank, it, i, got[i], prev,
                pattern(prev, (int)i, it));
        CHECK(0);
      }
  }
  /* Counters: one local completion per put of each context. */
  for (int c = 0; c < CONTEXTS; c++) {
    flush(&g, c);
    CHECK_EQ_INT((int)g.v[c].counters[1], ITERS / CONTEXTS);
    CHECK_EQ_INT((int)g.v[c].counters[0], 0);
  }

  /* Inline value (putValue) with an increment to every peer, then a
   * signal-only barrier; both on context 0. */
  for (int p = 0; p < n; p++) {
    if (p == rank) continue;
    gin_gfd_t val = {GIN_OP_PUT | GIN_OP_INLINE | GIN_OP_SIGNAL_INC, 8, 0, 0, ITERS * BLOCK + 8 * (size_t)rank, dstH,
                     0x1122334455667700ull | (uint64_t)rank, 0, SIG_VALUE, 1};
    post(&g, 0, p, &val);
  }
  for (int p = 0; p < n; p++) {
    if (p == rank) continue;
    gin_gfd_t sig = {GIN_OP_PUT | GIN_OP_SIGNAL_INC, 0, 0, 0, 0, 0, 0, 0, SIG_BARRIER, 1};
    post(&g, 0, p, &sig);
  }
  wait_u64(&g.v[0].signals[SIG_BARRIER], (uint64_t)n - 1, "the barrier's signal");
  /* Each peer's barrier signal followed its value on the same connection:
   * every value is there. */
  uint64_t mine[NRANKS];
  memcpy(mine, (char*)dst + ITERS * BLOCK, sizeof(mine));
  for (int p = 0; p < n; p++) CHECK(p == rank ? mine[p] == 0 : mine[p] == (0x1122334455667700ull | (uint64_t)p));

  /* A put to this rank itself, on context 1. */
  for (size_t i = 0; i < words; i++) src[i] = pattern(rank, (int)i, 99);
  gin_gfd_t self = {GIN_OP_PUT | GIN_OP_SIGNAL_ADD | GIN_OP_COUNTER, BLOCK, 0, srcH, 0, dstH, 0, 0, SIG_SELF, 5};
  post(&g, 1, rank, &self);
  wait_u64(&g.v[1].signals[SIG_SELF], 5, "the signal of a put to itself");
  for (size_t i = 0; i < words; i++) CHECK(dst[i] == pattern(rank, (int)i, 99));
  flush(&g, 1);
  CHECK_EQ_INT((int)g.v[1].counters[0], 1);
  CHECK_EQ_INT((int)g.v[0].signals[SIG_SELF], 0); /* contexts apart */

  CHECK_NCCL(gin_engine_destroy(e));
  CHECK_NCCL(ncclCommWindowDeregister(comm, dstWin));
  CHECK_NCCL(ncclCommWindowDeregister(comm, srcWin));
  CHECK_NCCL(ncclCommDestroy(comm));
  free(dst);
  free(src);
  return 0;
}

static void engine_failed(void* comm, ncclResult_t res) { comm_async_error_set(comm, res); }

static int rank_fail(int rank, int n, void* arg) {
  (void)arg;
  ncclComm_t comm = ranks_comm_init(rank, n);
  if (!comm->dp.net.api) SKIP("no net plugin bound to a host communicator");
  gin_config_t cfg = {.rank = rank, .nRanks = n, .bootstrap = comm->bootstrap, .net = comm->dp.net.api,
                      .netCtx = comm->dp.net.context, .netDev = comm->nNetDevs > 0 ? comm->netDevs[0] : 0,
                      .abortFlag = comm->abortFlag, .nContexts = CONTEXTS, .nSignals = 4, .nCounters = 2,
                      .winFind = api_window_gin_find, .winFindArg = comm, .onFail = engine_failed, .onFailArg = comm};
  gin_mem_host(&cfg.mem);
  gin_engine_t* e = NULL;
  CHECK_NCCL(gin_engine_create(&cfg, &e));
  gpu_t g = {.nRanks = n};
  for (int c = 0; c < CONTEXTS; c++) gin_engine_view(e, c, &g.v[c]);
  if (rank == 0) {
    gin_gfd_t bad = {GIN_OP_PUT | GIN_OP_SIGNAL_INC, 64, 0, 999, 0, 1, 0, 0, SIG_RING, 1};
    post(&g, 0, 1, &bad);
    wait_u64(&g.v[1].signals[SIG_SELF], GIN_FAIL_RELEASE, "a signal of the failed engine to be let go");
    wait_u64(&g.v[0].counters[1], GIN_FAIL_RELEASE, "a counter of the failed engine to be let go");
    ncclResult_t async = ncclSuccess;
    CHECK_NCCL(ncclCommGetAsyncError(comm, &async));
    CHECK_EQ_INT(async, ncclInvalidUsage);
    CHECK_STR_CONTAINS(ncclGetLastError(NULL), "window handle 999");
    /* More than a queue of puts after the failure: taken, never sent. */
    gin_gfd_t put = {GIN_OP_PUT | GIN_OP_SIGNAL_INC | GIN_OP_COUNTER, 8, 0, 0, 0, 1, 0, 1, SIG_RING, 1};
    for (int k = 0; k < 10; k++) post(&g, 1, 2 % n, &put);
    flush(&g, 1);
    CHECK(g.v[1].counters[1] == GIN_FAIL_RELEASE);
    CHECK_EQ_INT(gin_engine_destroy(e), ncclInvalidUsage);
  } else {
    CHECK_NCCL(gin_engine_destroy(e));
    ncclResult_t async = ncclInternalError;
    CHECK_NCCL(ncclCommGetAsyncError(comm, &async));
    CHECK_EQ_INT(async, ncclSuccess);
  }
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

int main(int argc, char** argv) {
  setenv("MKCCL_GIN_CHUNK_BYTES", "4096", 1);
  setenv("MKCCL_GIN_QUEUE_SIZE", "4", 1); /* small, so posting waits for the proxy to hand slots back */
  int fail = argc > 1 && strcmp(argv[1], "fail") == 0;
  CHECK_EQ_INT(ranks_run(NRANKS, fail ? rank_fail : rank_main, NULL, 240), 0);
  return 0;
}
