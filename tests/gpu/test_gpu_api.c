/* The communicator and memory API on GPUs, each result checked on every
 * rank (needs GPUs; exit 77 without). N processes, rank r on GPU r % ndev.
 *
 *   test_gpu_api split N        ncclCommSplit: one color with keys reversed
 *                               (ranks renumbered: an AllGather's blocks
 *                               come in the new order), colors rank % 2,
 *                               NCCL_SPLIT_NOCOLOR (no communicator)
 *   test_gpu_api shrink N       ncclCommShrink without the last rank (which
 *                               only aborts its parent): the survivors'
 *                               communicator runs AllReduce and AllGather
 *   test_gpu_api revoke N       ncclCommRevoke after a collective: new work
 *                               refused, the revoked communicator still splits
 *   test_gpu_api window N       ncclMemAlloc'ed memory as a window
 *                               (ncclCommWindowRegister) and registered
 *                               (ncclCommRegister): collectives on it right;
 *                               a host buffer is no GPU communicator's window;
 *                               ncclMemFree
 *   test_gpu_api simulate N     ncclGroupSimulateEnd: an estimate growing with
 *                               the size, nothing run (the output untouched),
 *                               then the same AllReduce for real
 *   test_gpu_api nonblocking N  config.blocking = 0: init and a split in
 *                               progress until ncclCommGetAsyncError says
 *                               done, collectives on both right
 * Inputs are rank * 1000003 + element (int32): distinct for every rank and
 * element. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "gpu_common.h"
#include "nccl.h"
#include "ranks.h"

#define COUNT 100003 /* odd, several steps of the connection buffers */

static int ndev;
static ncclUniqueId id;

static int32_t in_value(int rank, int i) { return rank * 1000003 + i; }

static int32_t* dev_ints(size_t n) {
  int32_t* p = NULL;
  CUDA_CHECK(cudaMalloc((void**)&p, n * sizeof(int32_t)));
  return p;
}
static void upload(int32_t* d, const int32_t* h, size_t n) {
  CUDA_CHECK(cudaMemcpy(d, h, n * sizeof(int32_t), cudaMemcpyHostToDevice));
}
static void download(int32_t* h, const int32_t* d, size_t n) {
  CUDA_CHECK(cudaMemcpy(h, d, n * sizeof(int32_t), cudaMemcpyDeviceToHost));
}

/* Waits for a non-blocking communicator's call to finish (a hang is the
 * alarm's to end) and returns its outcome. */
static ncclResult_t wait_ready(ncclComm_t comm) {
  ncclResult_t async = ncclInProgress;
  while (async == ncclInProgress) {
    CHECK_NCCL(ncclCommGetAsyncError(comm, &async));
    if (async == ncclInProgress) usleep(1000);
  }
  return async;
}

/* What ncclCommMemStats says once comm has run collectives: GPU memory of
 * its connections where it has peers over P2P (none alone), all of it
 * persistent (nothing is suspended); an unknown statistic refused. */
static void check_memstats(ncclComm_t comm, int m) {
  uint64_t total = 7, persist = 7, suspend = 7, suspended = 7;
  CHECK_NCCL(ncclCommMemStats(comm, ncclStatGpuMemTotal, &total));
  CHECK_NCCL(ncclCommMemStats(comm, ncclStatGpuMemPersist, &persist));
  CHECK_NCCL(ncclCommMemStats(comm, ncclStatGpuMemSuspend, &suspend));
  CHECK_NCCL(ncclCommMemStats(comm, ncclStatGpuMemSuspended, &suspended));
  CHECK_MSG(m == 1 ? total == 0 : (getenv("NCCL_P2P_DISABLE") || total > 0),
            "%d ranks: ncclCommMemStats total %llu", m, (unsigned long long)total);
  CHECK(persist == total && suspend == 0 && suspended == 0);
  uint64_t v = 7;
  CHECK_EQ_INT(ncclCommMemStats(comm, (ncclCommMemStat_t)99, &v), ncclInvalidArgument);
  CHECK(v == 7);
}

/* On `comm`, whose ranks are `members` (parent ranks, in the new order):
 * an AllReduce of every member's input in buf (in place) and an AllGather
 * of them, both checked element by element; then its memory statistics. */
static void check_comm(ncclComm_t comm, const int* members, int m, int32_t* buf, cudaStream_t stream, int nonblocking) {
  int count = -1, me = -1;
  CHECK_NCCL(ncclCommCount(comm, &count));
  CHECK_NCCL(ncclCommUserRank(comm, &me));
  CHECK_EQ_INT(count, m);
  int parent = members[me];
  int32_t* h = malloc(sizeof(int32_t) * COUNT * (size_t)m);
  int32_t* gathered = dev_ints((size_t)COUNT * (size_t)m);
  CHECK(h);
  for (int i = 0; i < COUNT; i++) h[i] = in_value(parent, i);
  upload(buf, h, COUNT);
  ncclResult_t r = ncclAllReduce(buf, buf, COUNT, ncclInt32, ncclSum, comm, stream);
  if (nonblocking && r == ncclInProgress) r = wait_ready(comm);
  CHECK_NCCL(r);
  r = ncclAllGather(buf, gathered, COUNT, ncclInt32, comm, stream);
  if (nonblocking && r == ncclInProgress) r = wait_ready(comm);
  CHECK_NCCL(r);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  long wrong = 0;
  int64_t base = 0;
  for (int k = 0; k < m; k++) base += (int64_t)members[k] * 1000003;
  download(h, buf, COUNT);
  for (int i = 0; i < COUNT; i++) wrong += h[i] != (int32_t)(base + (int64_t)m * i);
  CHECK_MSG(wrong == 0, "rank %d (%d of %d): AllReduce: %ld wrong", parent, me, m, wrong);
  /* The AllGather ran on the reduced buffer: every block is the sum. */
  download(h, gathered, (size_t)COUNT * (size_t)m);
  for (int k = 0; k < m; k++)
    for (int i = 0; i < COUNT; i++) wrong += h[(size_t)k * COUNT + i] != (int32_t)(base + (int64_t)m * i);
  CHECK_MSG(wrong == 0, "rank %d (%d of %d): AllGather: %ld wrong", parent, me, m, wrong);
  /* And of the inputs themselves: block k is member k's. */
  for (int i = 0; i < COUNT; i++) h[i] = in_value(parent, i);
  upload(buf, h, COUNT);
  r = ncclAllGather(buf, gathered, COUNT, ncclInt32, comm, stream);
  if (nonblocking && r == ncclInProgress) r = wait_ready(comm);
  CHECK_NCCL(r);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  download(h, gathered, (size_t)COUNT * (size_t)m);
  for (int k = 0; k < m; k++)
    for (int i = 0; i < COUNT; i++) wrong += h[(size_t)k * COUNT + i] != in_value(members[k], i);
  CHECK_MSG(wrong == 0, "rank %d (%d of %d): AllGather in member order: %ld wrong", parent, me, m, wrong);
  CUDA_CHECK(cudaFree(gathered));
  free(h);
  check_memstats(comm, m);
}

static void join(int rank, int n, cudaStream_t* stream, ncclComm_t* comm) {
  gpu_rank_join(rank, n, ndev, &id, stream, comm);
}

static int split_main(int rank, int n, void* arg) {
  (void)arg;
  cudaStream_t stream;
  ncclComm_t world, rev, half, none = (ncclComm_t)&none;
  join(rank, n, &stream, &world);
  int32_t* buf = dev_ints(COUNT);
  int members[16], m = 0;
  /* One color, keys reversed: new rank k is parent rank n - 1 - k. */
  CHECK_NCCL(ncclCommSplit(world, 0, n - 1 - rank, &rev, NULL));
  for (int k = 0; k < n; k++) members[k] = n - 1 - k;
  check_comm(rev, members, n, buf, stream, 0);
  /* Colors rank % 2, keys in parent order. */
  CHECK_NCCL(ncclCommSplit(world, rank % 2, rank, &half, NULL));
  for (int r = rank % 2; r < n; r += 2) members[m++] = r;
  check_comm(half, members, m, buf, stream, 0);
  /* No color: no communicator, and the others still split. */
  int out = n > 2 && rank == n - 1;
  ncclComm_t part = NULL;
  CHECK_NCCL(ncclCommSplit(world, out ? NCCL_SPLIT_NOCOLOR : 0, rank, out ? &none : &part, NULL));
  if (out) CHECK(none == NULL);
  else {
    for (int k = 0; k < n - (n > 2); k++) members[k] = k;
    check_comm(part, members, n - (n > 2), buf, stream, 0);
    CHECK_NCCL(ncclCommDestroy(part));
  }
  CHECK_NCCL(ncclCommDestroy(half));
  CHECK_NCCL(ncclCommDestroy(rev));
  /* The parent is untouched by its splits. */
  for (int k = 0; k < n; k++) members[k] = k;
  check_comm(world, members, n, buf, stream, 0);
  CUDA_CHECK(cudaFree(buf));
  CHECK_NCCL(ncclCommDestroy(world));
  CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}

static int shrink_main(int rank, int n, void* arg) {
  (void)arg;
  cudaStream_t stream;
  ncclComm_t world, shrunk = NULL;
  join(rank, n, &stream, &world);
  int excluded = n - 1;
  if (rank == excluded) {
    CHECK_NCCL(ncclCommAbort(world));
    CUDA_CHECK(cudaStreamDestroy(stream));
    return 0;
  }
  CHECK_NCCL(ncclCommShrink(world, &excluded, 1, &shrunk, NULL, NCCL_SHRINK_DEFAULT));
  CHECK(shrunk != NULL);
  int32_t* buf = dev_ints(COUNT);
  int members[16];
  for (int k = 0; k < n - 1; k++) members[k] = k;
  check_comm(shrunk, members, n - 1, buf, stream, 0);
  CUDA_CHECK(cudaFree(buf));
  CHECK_NCCL(ncclCommDestroy(shrunk));
  CHECK_NCCL(ncclCommAbort(world)); /* its excluded rank is gone */
  CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}

static int revoke_main(int rank, int n, void* arg) {
  (void)arg;
  cudaStream_t stream;
  ncclComm_t world, split;
  join(rank, n, &stream, &world);
  int32_t* buf = dev_ints(COUNT);
  int members[16];
  for (int k = 0; k < n; k++) members[k] = k;
  check_comm(world, members, n, buf, stream, 0);
  CHECK_NCCL(ncclCommRevoke(world, NCCL_REVOKE_DEFAULT));
  CHECK_EQ_INT(ncclAllReduce(buf, buf, COUNT, ncclInt32, ncclSum, world, stream), ncclInvalidUsage);
  CHECK(ncclGetLastError(world)[0] != '\0');
  CHECK_NCCL(ncclCommSplit(world, 0, rank, &split, NULL));
  check_comm(split, members, n, buf, stream, 0);
  CHECK_NCCL(ncclCommDestroy(split));
  CUDA_CHECK(cudaFree(buf));
  CHECK_NCCL(ncclCommDestroy(world));
  CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}

static int window_main(int rank, int n, void* arg) {
  (void)arg;
  cudaStream_t stream;
  ncclComm_t world;
  join(rank, n, &stream, &world);
  size_t bytes = COUNT * sizeof(int32_t);
  int32_t* buf = NULL;
  CHECK_NCCL(ncclMemAlloc((void**)&buf, bytes));
  CHECK(buf != NULL);
  struct cudaPointerAttributes attr;
  CUDA_CHECK(cudaPointerGetAttributes(&attr, buf));
  CHECK_MSG(attr.type == cudaMemoryTypeDevice, "ncclMemAlloc gave memory of type %d", (int)attr.type);
  ncclWindow_t win = NULL;
  CHECK_NCCL(ncclCommWindowRegister(world, buf, bytes, &win, NCCL_WIN_COLL_SYMMETRIC));
  CHECK(win != NULL);
  void* handle = NULL;
  CHECK_NCCL(ncclCommRegister(world, buf, bytes, &handle));
  int members[16];
  for (int k = 0; k < n; k++) members[k] = k;
  check_comm(world, members, n, buf, stream, 0);
  /* A host buffer is no GPU communicator's window (every rank refuses). */
  void* host = malloc(4096);
  ncclWindow_t bad = NULL;
  CHECK_EQ_INT(ncclCommWindowRegister(world, host, 4096, &bad, NCCL_WIN_DEFAULT), ncclInvalidArgument);
  CHECK(bad == NULL);
  free(host);
  CHECK_NCCL(ncclCommDeregister(world, handle));
  CHECK_NCCL(ncclCommWindowDeregister(world, win));
  CHECK_NCCL(ncclMemFree(buf));
  CHECK_NCCL(ncclCommDestroy(world));
  CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}

static float simulate(ncclComm_t comm, int32_t* in, int32_t* out, size_t count, cudaStream_t stream) {
  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  CHECK_NCCL(ncclGroupStart());
  CHECK_NCCL(ncclAllReduce(in, out, count, ncclInt32, ncclSum, comm, stream));
  CHECK_NCCL(ncclGroupSimulateEnd(&sim));
  return sim.estimatedTime;
}

static int simulate_main(int rank, int n, void* arg) {
  (void)arg;
  cudaStream_t stream;
  ncclComm_t world;
  join(rank, n, &stream, &world);
  int32_t *in = dev_ints(COUNT), *out = dev_ints(COUNT);
  int32_t* h = malloc(COUNT * sizeof(int32_t));
  CHECK(h);
  for (int i = 0; i < COUNT; i++) h[i] = in_value(rank, i);
  upload(in, h, COUNT);
  CUDA_CHECK(cudaMemset(out, 0x5a, COUNT * sizeof(int32_t)));
  float small = simulate(world, in, out, 16, stream), big = simulate(world, in, out, COUNT, stream);
  CHECK_MSG(small > 0 && big > small, "estimates: %g us for 64 B, %g us for %zu B", small, big, COUNT * sizeof(int32_t));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  download(h, out, COUNT);
  long wrong = 0;
  for (int i = 0; i < COUNT; i++) wrong += h[i] != 0x5a5a5a5a;
  CHECK_MSG(wrong == 0, "rank %d: %ld elements written by a simulated group", rank, wrong);
  /* The group is closed: the same AllReduce runs for real. */
  CHECK_NCCL(ncclAllReduce(in, out, COUNT, ncclInt32, ncclSum, world, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  download(h, out, COUNT);
  for (int i = 0; i < COUNT; i++) wrong += h[i] != 1000003 * n * (n - 1) / 2 + n * i;
  CHECK_MSG(wrong == 0, "rank %d: AllReduce after the simulation: %ld wrong", rank, wrong);
  free(h);
  CUDA_CHECK(cudaFree(in));
  CUDA_CHECK(cudaFree(out));
  CHECK_NCCL(ncclCommDestroy(world));
  CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}

static int nonblocking_main(int rank, int n, void* arg) {
  (void)arg;
  CUDA_CHECK(cudaSetDevice(rank % ndev));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t world = NULL, rev = NULL;
  ncclResult_t r = ncclCommInitRankConfig(&world, n, id, rank, &config);
  CHECK_MSG(r == ncclSuccess || r == ncclInProgress, "non-blocking init returned %d", (int)r);
  CHECK(world != NULL);
  CHECK_NCCL(wait_ready(world));
  int32_t* buf = dev_ints(COUNT);
  int members[16];
  for (int k = 0; k < n; k++) members[k] = k;
  check_comm(world, members, n, buf, stream, 1);
  r = ncclCommSplit(world, 0, n - 1 - rank, &rev, &config);
  CHECK_MSG(r == ncclSuccess || r == ncclInProgress, "non-blocking split returned %d", (int)r);
  CHECK_NCCL(wait_ready(world));
  CHECK(rev != NULL);
  CHECK_NCCL(wait_ready(rev));
  for (int k = 0; k < n; k++) members[k] = n - 1 - k;
  check_comm(rev, members, n, buf, stream, 1);
  CUDA_CHECK(cudaFree(buf));
  CHECK_NCCL(ncclCommDestroy(rev));
  CHECK_NCCL(ncclCommDestroy(world));
  CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}

int main(int argc, char** argv) {
  gpu_crash_handlers("test_gpu_api");
  if (argc < 3) {
    fprintf(stderr, "usage: test_gpu_api split|shrink|revoke|window|simulate|nonblocking N\n");
    return 2;
  }
  int n = atoi(argv[2]);
  CHECK(n >= 1 && n <= 16);
  static const struct {
    const char* name;
    int (*fn)(int, int, void*);
    int minRanks;
  } modes[] = {{"split", split_main, 1},   {"shrink", shrink_main, 2},     {"revoke", revoke_main, 1},
               {"window", window_main, 1}, {"simulate", simulate_main, 1}, {"nonblocking", nonblocking_main, 1}};
  int (*fn)(int, int, void*) = NULL;
  for (size_t k = 0; k < sizeof(modes) / sizeof(modes[0]); k++)
    if (!strcmp(argv[1], modes[k].name)) {
      fn = modes[k].fn;
      CHECK_MSG(n >= modes[k].minRanks, "%s needs %d ranks", argv[1], modes[k].minRanks);
    }
  CHECK_MSG(fn != NULL, "unknown mode %s", argv[1]);
  ndev = gpu_count_for_ranks("test_gpu_api", n);
  alarm(280); /* a hang becomes a failure */
  CHECK_NCCL(ncclGetUniqueId(&id));
  CHECK_EQ_INT(ranks_run(n, fn, NULL, 270), 0);
  printf("test_gpu_api %s %d: ok\n", argv[1], n);
  return 0;
}
