/* GPU collectives through the public API (needs GPUs; skipped without).
 *
 *   test_gpu_coll proc N [quick]    N processes, rank r on GPU r % ndev
 *   test_gpu_coll thread N [quick]  one process, ncclCommInitAll over N GPUs,
 *                                   every call inside a group over all ranks
 *   test_gpu_coll stuck N           the last rank never calls the AllReduce:
 *                                   the others get ncclRemoteError within
 *                                   MKCCL_TIMEOUT (1..10)
 *   test_gpu_coll graph N           AllReduce + AllGather captured into a
 *                                   CUDA graph, replayed with new inputs
 *                                   (TEST_GRAPH_EXPECT_REFUSED=1: the NET
 *                                   transport, capture refused)
 * A killed peer, abort from a thread and leaks: test_gpu_fault.c.
 *
 * Every collective, type and op (PreMulSum with a host-immediate and a device
 * scalar), counts 0/1/odd/large, roots, each case in and out of place: the
 * same matrix as the host test (tests/common/coll_cases.c).
 * Transports follow the environment (NCCL_P2P_DISABLE=1: SHM; plus
 * NCCL_SHM_DISABLE=1: NET). Exit 77: skipped. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "coll_cases.h"
#include "gpu_common.h"
#include "nccl.h"
#include "ranks.h"

static void* dev_alloc(size_t b) {
  void* p = NULL;
  CUDA_CHECK(cudaMalloc(&p, b ? b : 1));
  CUDA_CHECK(cudaMemset(p, 0, b ? b : 1));
  return p;
}
static void dev_free(void* p) { CUDA_CHECK(cudaFree(p)); }
/* cudaMemcpy from pageable memory may return before the data reached the
 * device, and the legacy stream it runs on does not order the collective's
 * non-blocking stream: wait for the device before the collective reads it. */
static void dev_copy(void* d, const void* s, size_t b) {
  if (b) CUDA_CHECK(cudaMemcpy(d, s, b, cudaMemcpyDefault));
  CUDA_CHECK(cudaDeviceSynchronize());
}
static void dev_sync(void* stream) { CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)stream)); }
static const coll_mem_t mem_gpu = {dev_alloc, dev_free, dev_copy, dev_copy, dev_sync, 0};

static int quick, ndev;
static ncclUniqueId id;

static int proc_main(int rank, int n, void* arg) {
  (void)arg;
  cudaStream_t stream;
  ncclComm_t comm;
  gpu_rank_join(rank, n, ndev, &id, &stream, &comm);
  int dev = -1;
  CHECK_NCCL(ncclCommCuDevice(comm, &dev));
  CHECK_EQ_INT(dev, rank % ndev);
  long wrong = coll_matrix_run(comm, rank, n, quick, &mem_gpu, stream);
  CHECK_MSG(wrong == 0, "rank %d: %ld wrong elements", rank, wrong);
  int trace = getenv("TEST_COLL_TRACE") != NULL;
  if (trace) fprintf(stderr, "rank %d: matrix done\n", rank);
  /* Back-to-back small collectives without waiting in between. */
  float* d = dev_alloc(sizeof(float) * 4);
  float one[4] = {1, 1, 1, 1}, out[4];
  dev_copy(d, one, sizeof(one));
  for (int i = 0; i < 200; i++) CHECK_NCCL(ncclAllReduce(d, d, 4, ncclFloat, ncclMax, comm, stream));
  if (trace) fprintf(stderr, "rank %d: 200 AllReduce launched\n", rank);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  dev_copy(out, d, sizeof(out));
  CHECK(out[0] == 1 && out[3] == 1);
  dev_free(d);
  if (trace) fprintf(stderr, "rank %d: 200 AllReduce done\n", rank);
  CHECK_NCCL(ncclCommDestroy(comm));
  if (trace) fprintf(stderr, "rank %d: destroyed\n", rank);
  CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}

/* `stuck` mode: the last rank joins the communicator and never calls the
 * collective (a stuck or dead peer). Every other rank's AllReduce must end
 * with ncclRemoteError from ncclCommGetAsyncError within MKCCL_TIMEOUT (the
 * caller sets it small) plus slack, its stream must complete, and
 * ncclCommAbort must then free everything: never a hang. */
static int stuck_main(int rank, int n, void* arg) {
  (void)arg;
  cudaStream_t stream;
  ncclComm_t comm;
  gpu_rank_join(rank, n, ndev, &id, &stream, &comm);
  int timeoutSec = gpu_timeout_param("stuck", 10);
  if (rank == n - 1) {
    sleep((unsigned)timeoutSec * 3 + 5); /* long after the others gave up */
    CHECK_NCCL(ncclCommAbort(comm));
    return 0;
  }
  float* d = dev_alloc(sizeof(float) * 1024);
  CHECK_NCCL(ncclAllReduce(d, d, 1024, ncclFloat, ncclSum, comm, stream));
  double waited;
  ncclResult_t async = gpu_wait_async_error(comm, timeoutSec * 2 + 10, &waited);
  CHECK_MSG(async == ncclRemoteError, "rank %d: async error %d after %.2f s, expected ncclRemoteError", rank, async,
            waited);
  CUDA_CHECK(cudaStreamSynchronize(stream)); /* the kernel ended */
  fprintf(stderr, "rank %d: ncclRemoteError after %.2f s (MKCCL_TIMEOUT %d)\n", rank, waited, timeoutSec);
  CHECK_NCCL(ncclCommAbort(comm));
  dev_free(d);
  CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}

/* One thread, N GPUs: each case prepared per rank, launched in one group. */
static int thread_main(int n) {
  CHECK(n >= 1 && n <= 16);
  ncclComm_t comms[16];
  cudaStream_t streams[16];
  int devs[16] = {0};
  for (int r = 0; r < n; r++) devs[r] = r % ndev; /* ranks share GPUs only with MKCCL_ALLOW_SAME_GPU */
  CHECK_NCCL(ncclCommInitAll(comms, n, devs));
  if (getenv("TEST_GPU_VERBOSE")) fprintf(stderr, "initialized %d ranks\n", n);
  for (int r = 0; r < n; r++) {
    CUDA_CHECK(cudaSetDevice(devs[r]));
    CUDA_CHECK(cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking));
  }
  long wrong = 0;
  int iter = 0;
  const size_t counts[] = {0, 1, 7, 1000003};
  for (int coll = 0; coll < C_N; coll++)
    for (int type = 0; type < ncclNumTypes; type++)
      for (int op = 0; op < (coll_reduces(coll) ? C_OP_N : 1); op++)
        for (int k = 0; k < 4; k++)
          for (int inPlace = 0; inPlace < 2; inPlace++) {
            if (k == 3 && type != ncclFloat32) continue;
            if (quick && op > 0 && op != ncclAvg && op != C_OP_PREMUL_DEV) continue;
            coll_case_t c = {coll, type, op, coll_rooted(coll) ? n - 1 : 0, inPlace, counts[k], iter++};
            coll_run_t runs[16];
            for (int r = 0; r < n; r++) {
              CUDA_CHECK(cudaSetDevice(devs[r]));
              coll_case_prepare(&runs[r], &c, comms[r], r, n, &mem_gpu, streams[r]);
            }
            if (getenv("TEST_GPU_VERBOSE") || getenv("TEST_COLL_TRACE"))
              fprintf(stderr, "case %s type %d op %d count %zu\n", coll_name(coll), type, op, counts[k]);
            int group = !getenv("TEST_GPU_NOGROUP"); /* GPU launches return at once: a group is not needed */
            if (group) CHECK_NCCL(ncclGroupStart());
            for (int r = 0; r < n; r++) CHECK_NCCL(coll_case_launch(&runs[r]));
            if (group) CHECK_NCCL(ncclGroupEnd());
            if (getenv("TEST_GPU_VERBOSE")) {
              fprintf(stderr, "launched\n");
              for (int q = 0; q < 3; q++) {
                for (int r = 0; r < n; r++) fprintf(stderr, "stream %d: %s; ", r, cudaGetErrorString(cudaStreamQuery(streams[r])));
                fprintf(stderr, "\n");
                sleep(1);
              }
            }
            for (int r = 0; r < n; r++) {
              CUDA_CHECK(cudaSetDevice(devs[r]));
              wrong += coll_case_check(&runs[r]);
            }
          }
  CHECK_MSG(wrong == 0, "%ld wrong elements", wrong);
  for (int r = 0; r < n; r++) CHECK_NCCL(ncclCommDestroy(comms[r]));
  return 0;
}

/* `graph` mode: AllReduce and AllGather captured into a CUDA graph, the
 * graph (with a Send/Recv ring when n > 1) replayed GRAPH_REPLAYS times with new inputs, an eager AllReduce
 * between replays; every result checked. Over the net transport the graph's
 * host node posts the proxy's ops at every replay: without them the data
 * would never move. */
#define GRAPH_COUNT (1 << 18)
#define GRAPH_REPLAYS 5
static int graph_main(int rank, int n, void* arg) {
  (void)arg;
  cudaStream_t stream;
  ncclComm_t comm;
  gpu_rank_join(rank, n, ndev, &id, &stream, &comm);
  size_t bytes = GRAPH_COUNT * sizeof(float);
  float *send = dev_alloc(bytes), *recv = dev_alloc(bytes), *gath = dev_alloc(bytes * (size_t)n), *eager = dev_alloc(bytes);
  float* ring = dev_alloc(bytes); /* from the previous rank, by Send/Recv (n > 1) */
  int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  float* host = malloc(bytes * (size_t)n);
  CHECK(host != NULL);
  cudaGraph_t graph;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  ncclResult_t r1 = ncclAllReduce(send, recv, GRAPH_COUNT, ncclFloat, ncclSum, comm, stream);
  ncclResult_t r2 = r1 == ncclSuccess ? ncclAllGather(send, gath, GRAPH_COUNT, ncclFloat, comm, stream) : r1;
  ncclResult_t r3 = ncclSuccess;
  if (r2 == ncclSuccess && n > 1) {
    CHECK_NCCL(ncclGroupStart());
    r3 = ncclSend(send, GRAPH_COUNT, ncclFloat, next, comm, stream);
    if (r3 == ncclSuccess) r3 = ncclRecv(ring, GRAPH_COUNT, ncclFloat, prev, comm, stream);
    ncclResult_t r4 = ncclGroupEnd();
    if (r3 == ncclSuccess) r3 = r4;
  }
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK_NCCL(r1);
  CHECK_NCCL(r2);
  CHECK_NCCL(r3);
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int k = 0; k < GRAPH_REPLAYS; k++) {
    for (size_t i = 0; i < GRAPH_COUNT; i++) host[i] = (float)((rank + 1) * (k + 1)) + (float)(i % 7);
    CUDA_CHECK(cudaMemcpyAsync(send, host, bytes, cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    /* An eager collective between replays: step counters stay in line. */
    for (size_t i = 0; i < GRAPH_COUNT; i++) host[i] = 1.0f;
    CUDA_CHECK(cudaMemcpyAsync(eager, host, bytes, cudaMemcpyHostToDevice, stream));
    CHECK_NCCL(ncclAllReduce(eager, eager, GRAPH_COUNT, ncclFloat, ncclSum, comm, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    long wrong = 0;
    CUDA_CHECK(cudaMemcpy(host, recv, bytes, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < GRAPH_COUNT; i++)
      wrong += host[i] != (float)((k + 1) * n * (n + 1) / 2) + (float)(n * (int)(i % 7));
    CUDA_CHECK(cudaMemcpy(host, gath, bytes * (size_t)n, cudaMemcpyDeviceToHost));
    for (int q = 0; q < n; q++)
      for (size_t i = 0; i < GRAPH_COUNT; i++)
        wrong += host[(size_t)q * GRAPH_COUNT + i] != (float)((q + 1) * (k + 1)) + (float)(i % 7);
    CUDA_CHECK(cudaMemcpy(host, eager, bytes, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < GRAPH_COUNT; i++) wrong += host[i] != (float)n;
    if (n > 1) {
      CUDA_CHECK(cudaMemcpy(host, ring, bytes, cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < GRAPH_COUNT; i++) wrong += host[i] != (float)((prev + 1) * (k + 1)) + (float)(i % 7);
    }
    CHECK_MSG(wrong == 0, "rank %d: replay %d: %ld wrong elements", rank, k, wrong);
  }
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  fprintf(stderr, "rank %d: %d replays of the captured AllReduce + AllGather%s, eager AllReduce between: exact\n",
          rank, GRAPH_REPLAYS, n > 1 ? " + Send/Recv ring" : "");
  free(host);
  dev_free(send), dev_free(recv), dev_free(gath), dev_free(eager), dev_free(ring);
  CHECK_NCCL(ncclCommDestroy(comm));
  CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}

int main(int argc, char** argv) {
  gpu_crash_handlers("test_gpu_coll");
  if (argc < 3) {
    fprintf(stderr, "usage: test_gpu_coll proc|thread|stuck|graph N [quick]\n");
    return 2;
  }
  int n = atoi(argv[2]);
  quick = argc > 3 && !strcmp(argv[3], "quick");
  ndev = gpu_count_in_child();
  if (ndev < 1) SKIP("test_gpu_coll: no CUDA device");
  alarm(280); /* a hang becomes a failure */
  if (!strcmp(argv[1], "thread")) {
    if (ndev < n && !getenv("MKCCL_ALLOW_SAME_GPU")) SKIP("test_gpu_coll: %d GPUs, thread mode needs %d", ndev, n);
    return thread_main(n);
  }
  CHECK_NCCL(ncclGetUniqueId(&id));
  int (*fn)(int, int, void*) = !strcmp(argv[1], "stuck") ? stuck_main : !strcmp(argv[1], "graph") ? graph_main : proc_main;
  CHECK_EQ_INT(ranks_run(n, fn, NULL, 1200), 0);
  return 0;
}
