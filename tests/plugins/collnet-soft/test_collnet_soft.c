/* collnet-soft through its ABI alone (dlopen, ncclCollNetPlugin_v12), as
 * NCCL would drive it: NRANKS processes listen, swap handles, connect
 * (rank 0's connect forks the aggregator), then run iallreduces of every
 * supported type and op, several outstanding at once, one in place, one
 * larger than the aggregator's step; every element on every rank is checked
 * against the reduction done here in rank order. Then iallgather and
 * ireducescatter over windows that cross the ranks' blocks, delivered
 * through scattered parts (every byte checked), and a window whose parts do
 * not add up refused. Then the ranks disagree on a count and each gets the
 * error that says so. */
#define _DEFAULT_SOURCE /* usleep, setenv */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "collnet/nccl_collnet.h"
#include "ranks.h"

#define NRANKS 4

typedef struct {
  volatile int arrived[8]; /* barrier generations */
  char handles[NRANKS][NCCL_NET_HANDLE_MAXSIZE];
} shared_t;

static shared_t* sh;
static const ncclCollNet_v12_t* cn;
static char last_warn[1024];

static void test_logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt,
                        ...) {
  (void)flags, (void)file, (void)line;
  if (level != NCCL_LOG_WARN) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_warn, sizeof(last_warn), fmt, ap);
  va_end(ap);
}

static void barrier(int gen) {
  __atomic_add_fetch(&sh->arrived[gen], 1, __ATOMIC_ACQ_REL);
  for (int i = 0; __atomic_load_n(&sh->arrived[gen], __ATOMIC_ACQUIRE) < NRANKS; i++) {
    CHECK_MSG(i < 20000, "barrier %d timed out", gen);
    usleep(1000);
  }
}

/* Rank r's element i of a case, small enough that no type overflows. */
static double value(int rank, size_t i, ncclRedOp_t op) {
  if (op == ncclProd) return 1 + (double)((rank + i) % 2);
  if (op == ncclMax || op == ncclMin) return (double)((rank * 7 + i * 3) % 11);
  return (double)(rank + 1) * (double)(i % 7 + 1) * 0.5;
}

#define TYPES(X)                                                                                                     \
  X(ncclInt8, int8_t) X(ncclUint8, uint8_t) X(ncclInt32, int32_t) X(ncclUint32, uint32_t) X(ncclInt64, int64_t) \
  X(ncclUint64, uint64_t) X(ncclFloat32, float) X(ncclFloat64, double)

static size_t type_size(ncclDataType_t t) {
#define X(e, T) if (t == e) return sizeof(T);
  TYPES(X)
#undef X
  return 0;
}

#define APPLY(T, op, a, b)                                                          \
  ((op) == ncclSum    ? (T)((a) + (b))                                              \
   : (op) == ncclProd ? (T)((a) * (b))                                              \
   : (op) == ncclMax  ? ((a) > (b) ? (a) : (b))                                     \
                      : ((a) < (b) ? (a) : (b)))

static void fill(void* buf, ncclDataType_t t, ncclRedOp_t op, int rank, size_t count) {
#define X(e, T) \
  if (t == e) for (size_t i = 0; i < count; i++) ((T*)buf)[i] = (T)value(rank, i, op);
  TYPES(X)
#undef X
}

/* Every element against the reduction in rank order (the aggregator's order). */
static void check_result(const void* buf, ncclDataType_t t, ncclRedOp_t op, int rank, size_t count) {
#define X(e, T)                                                                                         \
  if (t == e)                                                                                           \
    for (size_t i = 0; i < count; i++) {                                                                \
      T want = (T)value(0, i, op);                                                                      \
      for (int r = 1; r < NRANKS; r++) want = APPLY(T, op, want, (T)value(r, i, op));                  \
      T got = ((const T*)buf)[i];                                                                       \
      CHECK_MSG(got == want, "rank %d, type %d, op %d, element %zu of %zu: %g, want %g", rank, (int)t, (int)op, i, \
                count, (double)got, (double)want);                                                      \
    }
  TYPES(X)
#undef X
}

static void wait_req(void* req, size_t bytes) {
  int done = 0, size = -1;
  for (long polls = 0; !done; polls++) {
    CHECK_MSG(polls < 50000000, "request never completed");
    CHECK_NCCL(cn->test(req, &done, &size));
  }
  CHECK_EQ_INT(size, bytes);
}

static void* post(void* cc, const void* send, void* recv, size_t count, ncclDataType_t t, ncclRedOp_t op) {
  void* req = NULL;
  CHECK_NCCL(cn->iallreduce(cc, (void*)send, recv, count, t, op, NULL, NULL, &req));
  CHECK(req != NULL);
  return req;
}

static void run_cases(int rank, void* cc) {
  const ncclDataType_t types[] = {ncclInt8,  ncclUint8,  ncclInt32,   ncclUint32,
                                  ncclInt64, ncclUint64, ncclFloat32, ncclFloat64};
  const ncclRedOp_t ops[] = {ncclSum, ncclProd, ncclMax, ncclMin};
  int cases = 0;
  for (size_t ti = 0; ti < sizeof(types) / sizeof(types[0]); ti++) {
    /* The four ops of a type outstanding at once, tested newest first. */
    size_t count = 1000 + ti * 37;
    void *send[4], *recv[4], *req[4];
    for (int o = 0; o < 4; o++) {
      int sup = -1;
      CHECK_NCCL(cn->reduceSupport(types[ti], ops[o], &sup));
      CHECK_EQ_INT(sup, 1);
      send[o] = malloc(count * type_size(types[ti]));
      recv[o] = calloc(count, type_size(types[ti]));
      CHECK(send[o] && recv[o]);
      fill(send[o], types[ti], ops[o], rank, count);
      req[o] = post(cc, send[o], recv[o], count, types[ti], ops[o]);
    }
    for (int o = 3; o >= 0; o--) {
      wait_req(req[o], count * type_size(types[ti]));
      check_result(recv[o], types[ti], ops[o], rank, count);
      free(send[o]), free(recv[o]);
      cases++;
    }
  }
  CHECK_EQ_INT(cases, 32);
  /* In place, and more bytes than the aggregator's step (MKCCL_COLLNET_SOFT_CHUNK below). */
  size_t big = 300001;
  float* buf = malloc(big * sizeof(float));
  CHECK(buf);
  fill(buf, ncclFloat32, ncclSum, rank, big);
  wait_req(post(cc, buf, buf, big, ncclFloat32, ncclSum), big * sizeof(float));
  check_result(buf, ncclFloat32, ncclSum, rank, big);
  free(buf);
  /* No elements: a result header alone. */
  wait_req(post(cc, NULL, NULL, 0, ncclFloat64, ncclMax), 0);
  void* freq = NULL;
  CHECK_NCCL(cn->iflush(cc, NULL, 0, NULL, &freq));
  wait_req(freq, 0);
}

/* A rank's block of an allgather (bytes), and its input of a reduce-scatter. */
static uint8_t gather_byte(int rank, size_t j) { return (uint8_t)(rank * 61 + j * 7 + 1); }
static int32_t scatter_value(int rank, size_t i) { return (int32_t)((rank + 1) * (int)(i % 13 + 1) - 5 * rank); }

/* Where a rank's own bytes of window [wo, ...) start in its buffer, as NCCL
 * passes them: at wo's offset in its block if the window starts there, else
 * at the block's start. */
static size_t window_mine_at(int rank, size_t perRank, size_t wo) {
  return wo / perRank == (size_t)rank ? wo % perRank : 0;
}

/* iallgather and ireducescatter over windows that cross blocks, each
 * delivered through two parts cut at an odd place, all windows outstanding
 * at once; every byte of every rank checked. */
static void run_windows(int rank, void* cc) {
  enum { B = 1003, W = 1500, K = 257, WE = 300 };
  size_t whole = (size_t)NRANKS * B;
  uint8_t mine[B], out[NRANKS * B];
  for (size_t j = 0; j < B; j++) mine[j] = gather_byte(rank, j);
  memset(out, 0xee, sizeof(out));
  void* reqs[16];
  ncclNetSGE_v12_t parts[16][2];
  int n = 0;
  for (size_t wo = 0; wo < whole; wo += W, n++) {
    size_t wb = whole - wo < W ? whole - wo : W, cut = wb / 3;
    parts[n][0] = (ncclNetSGE_v12_t){NULL, out + wo, cut};
    parts[n][1] = (ncclNetSGE_v12_t){NULL, out + wo + cut, wb - cut};
    CHECK_NCCL(cn->iallgather(cc, mine + window_mine_at(rank, B, wo), 2, parts[n], B, wo, wb, NULL, &reqs[n]));
    CHECK(reqs[n] != NULL);
  }
  for (size_t wo = 0, i = 0; wo < whole; wo += W, i++) wait_req(reqs[i], whole - wo < W ? whole - wo : W);
  for (int r = 0; r < NRANKS; r++)
    for (size_t j = 0; j < B; j++)
      CHECK_MSG(out[(size_t)r * B + j] == gather_byte(r, j), "rank %d: allgather byte %zu of rank %d: %d, want %d",
                rank, j, r, out[(size_t)r * B + j], gather_byte(r, j));

  /* ReduceScatter of int32 sums: blocks of K elements, windows of WE. */
  size_t bpr = K * sizeof(int32_t), wbytes = WE * sizeof(int32_t), total = (size_t)NRANKS * bpr;
  int32_t in[NRANKS * K], res[K];
  for (size_t i = 0; i < (size_t)NRANKS * K; i++) in[i] = scatter_value(rank, i);
  for (size_t i = 0; i < K; i++) res[i] = -777;
  n = 0;
  for (size_t wo = 0; wo < total; wo += wbytes, n++) {
    size_t wb = total - wo < wbytes ? total - wo : wbytes, cut = (wb / 5) / 4 * 4;
    parts[n][0] = (ncclNetSGE_v12_t){NULL, (char*)in + wo, cut};
    parts[n][1] = (ncclNetSGE_v12_t){NULL, (char*)in + wo + cut, wb - cut};
    CHECK_NCCL(cn->ireducescatter(cc, 2, parts[n], (char*)res + window_mine_at(rank, bpr, wo), bpr, wo, wb,
                                  ncclInt32, ncclSum, NULL, &reqs[n]));
    CHECK(reqs[n] != NULL);
  }
  for (size_t wo = 0, i = 0; wo < total; wo += wbytes, i++) wait_req(reqs[i], total - wo < wbytes ? total - wo : wbytes);
  for (size_t k = 0; k < K; k++) {
    int32_t want = 0;
    for (int r = 0; r < NRANKS; r++) want += scatter_value(r, (size_t)rank * K + k);
    CHECK_MSG(res[k] == want, "rank %d: reducescatter element %zu: %d, want %d", rank, k, res[k], want);
  }
}

static int rank_main(int rank, int n, void* arg) {
  (void)n;
  const char* path = arg;
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  CHECK_MSG(lib != NULL, "dlopen %s: %s", path, dlerror());
  cn = dlsym(lib, NCCL_COLLNET_PLUGIN_SYMBOL_V12);
  CHECK(cn != NULL);
  CHECK(strcmp(cn->name, "collnet-soft") == 0);
  void* ctx = NULL;
  CHECK_NCCL(cn->init(&ctx, 42, test_logger));
  int ndev = 0;
  CHECK_NCCL(cn->devices(&ndev));
  CHECK_EQ_INT(ndev, 1);
  ncclNetProperties_v12_t props;
  CHECK_NCCL(cn->getProperties(0, &props));
  CHECK_EQ_INT(props.ptrSupport, NCCL_PTR_HOST);
  CHECK(cn->iallgather != NULL && cn->ireducescatter != NULL);
  int sup = -1;
  CHECK_NCCL(cn->reduceSupport(ncclFloat16, ncclSum, &sup));
  CHECK_EQ_INT(sup, 0);
  CHECK_NCCL(cn->reduceSupport(ncclFloat32, ncclAvg, &sup));
  CHECK_EQ_INT(sup, 0);

  void* lc = NULL;
  CHECK_NCCL(cn->listen(ctx, 0, sh->handles[rank], &lc));
  barrier(0);
  void* handles[NRANKS];
  for (int r = 0; r < NRANKS; r++) handles[r] = sh->handles[r];
  void* cc = NULL;
  CHECK_NCCL(cn->connect(handles, NRANKS, rank, lc, &cc));
  CHECK_NCCL(cn->closeListen(lc));
  if (rank == 0) CHECK_EQ_INT(waitpid(-1, NULL, WNOHANG), 0); /* the aggregator runs, as rank 0's child */
  void* mh = NULL;
  CHECK_NCCL(cn->regMr(cc, handles, sizeof(handles), NCCL_PTR_HOST, &mh));
  CHECK_NCCL(cn->deregMr(cc, mh));
  CHECK_EQ_INT(cn->regMr(cc, handles, sizeof(handles), NCCL_PTR_CUDA, &mh), ncclInvalidUsage);
  CHECK_STR_CONTAINS(last_warn, "collnet-soft reduces host memory only");
  void* req = NULL;
  ncclNetSGE_v12_t bad = {NULL, handles, 8};
  CHECK_EQ_INT(cn->iallgather(cc, handles, 1, &bad, 16, 0, 12, NULL, &req), ncclInvalidArgument);
  CHECK_STR_CONTAINS(last_warn, "the parts hold 8 bytes, the window 12");

  run_cases(rank, cc);
  run_windows(rank, cc);

  /* Rank 2 asks for one element more: every rank is told, none gets data. */
  float a[8] = {0}, b[8];
  req = post(cc, a, b, rank == 2 ? 8 : 7, ncclFloat32, ncclSum);
  int done = 0, size = 0;
  ncclResult_t res = ncclSuccess;
  for (long polls = 0; res == ncclSuccess && !done; polls++) {
    CHECK_MSG(polls < 50000000, "the mismatch was never reported");
    res = cn->test(req, &done, &size);
  }
  CHECK_EQ_INT(res, ncclInvalidUsage);
  CHECK_STR_CONTAINS(last_warn, "the ranks disagree on its count, type or op");
  CHECK_NCCL(cn->closeColl(cc));
  CHECK_NCCL(cn->finalize(ctx));
  dlclose(lib);
  return 0;
}

int main(void) {
  sh = ranks_shared_alloc(sizeof(*sh));
  CHECK(sh != NULL);
  memset(sh, 0, sizeof(*sh));
  /* Hosted as by NCCL (no mkccl services): the plugin reads the environment. */
  setenv("NCCL_SOCKET_IFNAME", "lo", 1);
  setenv("MKCCL_COLLNET_SOFT_CHUNK", "65536", 1);
  CHECK_EQ_INT(ranks_run(NRANKS, rank_main, (void*)COLLNET_SOFT_PLUGIN, 120), 0);
  return 0;
}
