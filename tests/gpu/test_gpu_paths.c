/* What frameworks do on GPU communicators, N ranks as processes (one GPU
 * each, or one GPU shared with MKCCL_ALLOW_SAME_GPU=1):
 * - `premul`: PreMulSum with a device-resident scalar (ncclScalarDevice, a
 *   scalar in device memory as PyTorch's tensor factor is) is read by the
 *   kernel when it runs: values written on the stream before each eager
 *   call, and before each replay of a captured graph, are the ones applied;
 *   every rank has its own scalar, inputs differ by rank and element; in
 *   place and out of place; a communicator of one rank too.
 * - `streams`: one group of one communicator on two streams: the work runs
 *   after what both streams held (the second stream's input arrives by a
 *   large copy queued just before), and both streams' later work sees the
 *   results (read back on the second stream, without a device sync).
 * - `order`: collectives of one communicator called one by one on two
 *   streams run in call order, as NCCL's do: one rank's first stream is held
 *   back by a host function, so a second collective that did not wait for
 *   the first would meet the other ranks' first one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_common.h"
#include "ranks.h"

#define COUNT (1 << 20)
#define REPLAYS 4

static int ndev;
static ncclUniqueId id;

static float input(int rank, size_t i) { return (float)(rank * 1000 + (int)(i % 1009)); }

/* sum over r of (base + r) * input(r, i) */
static float premul_expect(int n, int base, size_t i) {
  float e = 0;
  for (int r = 0; r < n; r++) e += (float)(base + r) * input(r, i);
  return e;
}

static long premul_wrong(const float* host, int n, int base) {
  long wrong = 0;
  for (size_t i = 0; i < COUNT; i++) wrong += host[i] != premul_expect(n, base, i);
  return wrong;
}

static void premul_run(int rank, int n, cudaStream_t stream, ncclComm_t comm) {
  size_t bytes = COUNT * sizeof(float);
  float *send, *recv, *scale;
  CUDA_CHECK(cudaMalloc((void**)&send, bytes));
  CUDA_CHECK(cudaMalloc((void**)&recv, bytes));
  CUDA_CHECK(cudaMalloc((void**)&scale, sizeof(float)));
  float* host;
  CUDA_CHECK(cudaMallocHost((void**)&host, bytes));
  float* scaleHost;
  CUDA_CHECK(cudaMallocHost((void**)&scaleHost, sizeof(float) * (2 + REPLAYS)));
  ncclRedOp_t op;
  CHECK_NCCL(ncclRedOpCreatePreMulSum(&op, scale, ncclFloat32, ncclScalarDevice, comm));

  for (size_t i = 0; i < COUNT; i++) host[i] = input(rank, i);
  /* Eager: each call after a write of the scalar on the stream. */
  for (int inPlace = 0; inPlace < 2; inPlace++) {
    float* out = inPlace ? send : recv;
    for (int k = 0; k < 2; k++) {
      scaleHost[k] = (float)(2 + 3 * k + rank);
      CUDA_CHECK(cudaMemcpyAsync(send, host, bytes, cudaMemcpyHostToDevice, stream));
      CUDA_CHECK(cudaMemcpyAsync(scale, &scaleHost[k], sizeof(float), cudaMemcpyHostToDevice, stream));
      CHECK_NCCL(ncclAllReduce(send, out, COUNT, ncclFloat32, op, comm, stream));
    }
    float* back;
    CUDA_CHECK(cudaMallocHost((void**)&back, bytes));
    CUDA_CHECK(cudaMemcpyAsync(back, out, bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    long wrong = premul_wrong(back, n, 5); /* the second call's scalar: 2 + 3 + rank */
    CHECK_MSG(wrong == 0, "rank %d: eager PreMulSum (%s): %ld wrong", rank, inPlace ? "in place" : "out of place", wrong);
    CUDA_CHECK(cudaFreeHost(back));
  }

  /* Captured once, replayed with a new scalar each time. */
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  ncclResult_t r = ncclAllReduce(send, recv, COUNT, ncclFloat32, op, comm, stream);
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK_NCCL(r);
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int k = 0; k < REPLAYS; k++) {
    scaleHost[2 + k] = (float)(1 + k + rank);
    CUDA_CHECK(cudaMemcpyAsync(send, host, bytes, cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaMemcpyAsync(scale, &scaleHost[2 + k], sizeof(float), cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    float* back;
    CUDA_CHECK(cudaMallocHost((void**)&back, bytes));
    CUDA_CHECK(cudaMemcpyAsync(back, recv, bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    long wrong = premul_wrong(back, n, 1 + k);
    CHECK_MSG(wrong == 0, "rank %d: replay %d of a captured PreMulSum: %ld wrong", rank, k, wrong);
    CUDA_CHECK(cudaFreeHost(back));
  }
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CHECK_NCCL(ncclRedOpDestroy(op, comm));
  CUDA_CHECK(cudaFreeHost(scaleHost));
  CUDA_CHECK(cudaFreeHost(host));
  CUDA_CHECK(cudaFree(scale));
  CUDA_CHECK(cudaFree(recv));
  CUDA_CHECK(cudaFree(send));
}

static int premul_main(int rank, int n, void* arg) {
  (void)arg;
  cudaStream_t stream;
  ncclComm_t comm;
  gpu_rank_join(rank, n, ndev, &id, &stream, &comm);
  premul_run(rank, n, stream, comm);
  CHECK_NCCL(ncclCommDestroy(comm));
  CUDA_CHECK(cudaStreamDestroy(stream));
  fprintf(stderr, "rank %d: PreMulSum with device scalars, eager and %d replays: exact\n", rank, REPLAYS);
  return 0;
}

/* What `streams` and `order` run on: the rank's communicator on its stream
 * s1, and a second, non-blocking stream s2, for ROUNDS rounds. */
#define ROUNDS 3
typedef struct {
  int rank;
  cudaStream_t s1, s2;
  ncclComm_t comm;
} two_streams_t;

static two_streams_t two_streams_open(int rank, int n) {
  two_streams_t t = {.rank = rank};
  gpu_rank_join(rank, n, ndev, &id, &t.s1, &t.comm);
  CUDA_CHECK(cudaStreamCreateWithFlags(&t.s2, cudaStreamNonBlocking));
  return t;
}

/* Once every round was exact: what two_streams_open made goes, and the
 * rank says what it checked. */
static int two_streams_close(two_streams_t* t, const char* what) {
  CHECK_NCCL(ncclCommDestroy(t->comm));
  CUDA_CHECK(cudaStreamDestroy(t->s2));
  CUDA_CHECK(cudaStreamDestroy(t->s1));
  fprintf(stderr, "rank %d: %s, %d rounds: exact\n", t->rank, what, ROUNDS);
  return 0;
}

/* The second stream's input comes last out of a copy much larger than the
 * collective, so work that does not wait for that stream reads it early. */
#define BIG (64u << 20)
static int streams_main(int rank, int n, void* arg) {
  (void)arg;
  two_streams_t t = two_streams_open(rank, n);
  cudaStream_t s1 = t.s1, s2 = t.s2;
  ncclComm_t comm = t.comm;
  size_t bytes = COUNT * sizeof(float);
  char* big;
  float *a, *aOut, *bOut;
  CUDA_CHECK(cudaMalloc((void**)&big, BIG));
  CUDA_CHECK(cudaMalloc((void**)&a, bytes));
  CUDA_CHECK(cudaMalloc((void**)&aOut, bytes));
  CUDA_CHECK(cudaMalloc((void**)&bOut, bytes));
  float* b = (float*)(big + BIG - bytes);
  char* hostBig;
  CUDA_CHECK(cudaMallocHost((void**)&hostBig, BIG));
  float* host;
  CUDA_CHECK(cudaMallocHost((void**)&host, bytes));
  for (int round = 0; round < ROUNDS; round++) {
    float* hb = (float*)(hostBig + BIG - bytes);
    for (size_t i = 0; i < COUNT; i++) {
      host[i] = (float)(rank + 1) + (float)(i % 13);
      hb[i] = (float)((rank + 1) * (round + 2)) + (float)(i % 11);
    }
    CUDA_CHECK(cudaMemcpyAsync(a, host, bytes, cudaMemcpyHostToDevice, s1));
    CUDA_CHECK(cudaStreamSynchronize(s1));
    CUDA_CHECK(cudaMemsetAsync(bOut, 0, bytes, s2));
    CUDA_CHECK(cudaMemcpyAsync(big, hostBig, BIG, cudaMemcpyHostToDevice, s2));
    CHECK_NCCL(ncclGroupStart());
    CHECK_NCCL(ncclAllReduce(a, aOut, COUNT, ncclFloat32, ncclSum, comm, s1));
    CHECK_NCCL(ncclAllReduce(b, bOut, COUNT, ncclFloat32, ncclSum, comm, s2));
    CHECK_NCCL(ncclGroupEnd());
    float* back;
    CUDA_CHECK(cudaMallocHost((void**)&back, 2 * bytes));
    CUDA_CHECK(cudaMemcpyAsync(back, aOut, bytes, cudaMemcpyDeviceToHost, s2));
    CUDA_CHECK(cudaMemcpyAsync(back + COUNT, bOut, bytes, cudaMemcpyDeviceToHost, s2));
    CUDA_CHECK(cudaStreamSynchronize(s2));
    long wrong = 0;
    for (size_t i = 0; i < COUNT; i++) {
      wrong += back[i] != (float)(n * (n + 1) / 2) + (float)(n * (int)(i % 13));
      wrong += back[COUNT + i] != (float)((round + 2) * n * (n + 1) / 2) + (float)(n * (int)(i % 11));
    }
    CHECK_MSG(wrong == 0, "rank %d: round %d: a group on two streams: %ld wrong", rank, round, wrong);
    CUDA_CHECK(cudaFreeHost(back));
  }
  CUDA_CHECK(cudaFreeHost(host));
  CUDA_CHECK(cudaFreeHost(hostBig));
  CUDA_CHECK(cudaFree(bOut));
  CUDA_CHECK(cudaFree(aOut));
  CUDA_CHECK(cudaFree(a));
  CUDA_CHECK(cudaFree(big));
  return two_streams_close(&t, "a group on two streams");
}

static void hold_back(void* arg) { usleep((useconds_t)(uintptr_t)arg); }

static float order_value(int which, int rank, size_t i) { return (float)(which * 100000 + rank * 1000 + (int)(i % 997)); }

static int order_main(int rank, int n, void* arg) {
  (void)arg;
  two_streams_t t = two_streams_open(rank, n);
  cudaStream_t s1 = t.s1, s2 = t.s2;
  ncclComm_t comm = t.comm;
  size_t bytes = COUNT * sizeof(float);
  float *a, *b, *host;
  CUDA_CHECK(cudaMalloc((void**)&a, bytes));
  CUDA_CHECK(cudaMalloc((void**)&b, bytes));
  CUDA_CHECK(cudaMallocHost((void**)&host, bytes));
  for (int round = 0; round < ROUNDS; round++) {
    for (int which = 0; which < 2; which++) {
      for (size_t i = 0; i < COUNT; i++) host[i] = order_value(which + 2 * round, rank, i);
      CUDA_CHECK(cudaMemcpy(which ? b : a, host, bytes, cudaMemcpyHostToDevice));
    }
    if (rank == round % n) CUDA_CHECK(cudaLaunchHostFunc(s1, hold_back, (void*)(uintptr_t)300000));
    CHECK_NCCL(ncclAllReduce(a, a, COUNT, ncclFloat32, ncclSum, comm, s1));
    CHECK_NCCL(ncclAllReduce(b, b, COUNT, ncclFloat32, ncclSum, comm, s2));
    CUDA_CHECK(cudaStreamSynchronize(s2));
    CUDA_CHECK(cudaStreamSynchronize(s1));
    long wrong = 0;
    for (int which = 0; which < 2; which++) {
      CUDA_CHECK(cudaMemcpy(host, which ? b : a, bytes, cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < COUNT; i++) {
        float want = 0;
        for (int r = 0; r < n; r++) want += order_value(which + 2 * round, r, i);
        wrong += host[i] != want;
      }
    }
    CHECK_MSG(wrong == 0, "rank %d: round %d: two collectives on two streams: %ld wrong", rank, round, wrong);
  }
  CUDA_CHECK(cudaFreeHost(host));
  CUDA_CHECK(cudaFree(b));
  CUDA_CHECK(cudaFree(a));
  return two_streams_close(&t, "collectives on two streams in call order");
}

#define WIDE_COUNT 1024
static int wide_main(int rank, int n, void* arg) {
  (void)arg;
  cudaStream_t stream;
  ncclComm_t comm;
  gpu_rank_join(rank, n, ndev, &id, &stream, &comm);
  size_t bytes = WIDE_COUNT * sizeof(int32_t);
  int32_t *sum, *bc, *gath, *from;
  CUDA_CHECK(cudaMalloc((void**)&sum, bytes));
  CUDA_CHECK(cudaMalloc((void**)&bc, bytes));
  CUDA_CHECK(cudaMalloc((void**)&gath, (size_t)n * sizeof(int32_t)));
  CUDA_CHECK(cudaMalloc((void**)&from, sizeof(int32_t)));
  int32_t* host = malloc(bytes > (size_t)n * sizeof(int32_t) ? bytes : (size_t)n * sizeof(int32_t));
  CHECK(host);
  for (int i = 0; i < WIDE_COUNT; i++) host[i] = rank * 1000 + i;
  CUDA_CHECK(cudaMemcpy(sum, host, bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(bc, host, bytes, cudaMemcpyHostToDevice));
  int32_t mine = rank * 7 + 3;
  CUDA_CHECK(cudaMemcpy(from, &mine, sizeof(mine), cudaMemcpyHostToDevice));
  CHECK_NCCL(ncclAllReduce(sum, sum, WIDE_COUNT, ncclInt32, ncclSum, comm, stream));
  CHECK_NCCL(ncclBroadcast(bc, bc, WIDE_COUNT, ncclInt32, n - 1, comm, stream));
  CHECK_NCCL(ncclAllGather(from, gath, 1, ncclInt32, comm, stream));
  int32_t* ring;
  CUDA_CHECK(cudaMalloc((void**)&ring, sizeof(int32_t)));
  CHECK_NCCL(ncclGroupStart());
  CHECK_NCCL(ncclSend(from, 1, ncclInt32, (rank + 1) % n, comm, stream));
  CHECK_NCCL(ncclRecv(ring, 1, ncclInt32, (rank + n - 1) % n, comm, stream));
  CHECK_NCCL(ncclGroupEnd());
  double waited;
  CHECK_EQ_INT(gpu_stream_wait(stream, 1800, &waited), cudaSuccess);
  long wrong = 0;
  CUDA_CHECK(cudaMemcpy(host, sum, bytes, cudaMemcpyDeviceToHost));
  for (int i = 0; i < WIDE_COUNT; i++) wrong += host[i] != 1000 * (n * (n - 1) / 2) + n * i;
  CUDA_CHECK(cudaMemcpy(host, bc, bytes, cudaMemcpyDeviceToHost));
  for (int i = 0; i < WIDE_COUNT; i++) wrong += host[i] != (n - 1) * 1000 + i;
  CUDA_CHECK(cudaMemcpy(host, gath, (size_t)n * sizeof(int32_t), cudaMemcpyDeviceToHost));
  for (int r = 0; r < n; r++) wrong += host[r] != r * 7 + 3;
  int32_t got;
  CUDA_CHECK(cudaMemcpy(&got, ring, sizeof(got), cudaMemcpyDeviceToHost));
  wrong += got != ((rank + n - 1) % n) * 7 + 3;
  CHECK_MSG(wrong == 0, "rank %d of %d: %ld wrong values", rank, n, wrong);
  if (rank == 0) fprintf(stderr, "%d ranks: AllReduce, Broadcast, AllGather, Send/Recv ring exact (%.1f s)\n", n, waited);
  free(host);
  CUDA_CHECK(cudaFree(ring));
  CUDA_CHECK(cudaFree(from));
  CUDA_CHECK(cudaFree(gath));
  CUDA_CHECK(cudaFree(bc));
  CUDA_CHECK(cudaFree(sum));
  CHECK_NCCL(ncclCommDestroy(comm));
  CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}

int main(int argc, char** argv) {
  gpu_crash_handlers("test_gpu_paths");
  if (argc < 3 || (strcmp(argv[1], "premul") && strcmp(argv[1], "streams") && strcmp(argv[1], "order") &&
                   strcmp(argv[1], "wide"))) {
    fprintf(stderr, "usage: test_gpu_paths premul|streams|order|wide N\n");
    return 2;
  }
  int n = atoi(argv[2]);
  ndev = gpu_count_for_ranks("test_gpu_paths", n);
  int wide = !strcmp(argv[1], "wide");
  alarm(wide ? 1900 : 280);
  CHECK_NCCL(ncclGetUniqueId(&id));
  int (*fn)(int, int, void*) = !strcmp(argv[1], "premul")  ? premul_main
                               : !strcmp(argv[1], "order") ? order_main
                               : wide                      ? wide_main
                                                           : streams_main;
  CHECK_EQ_INT(ranks_run(n, fn, NULL, wide ? 1850 : 270), 0);
  if (!strcmp(argv[1], "premul")) { /* and alone */
    CHECK_NCCL(ncclGetUniqueId(&id));
    CHECK_EQ_INT(ranks_run(1, premul_main, NULL, 120), 0);
  }
  return 0;
}
