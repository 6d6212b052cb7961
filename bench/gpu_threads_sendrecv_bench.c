/* mkccl-gpu-sendrecv-threads: Send/Recv between GPU ranks of ONE process
 * (ncclCommInitAll), the case P2P direct serves: every rank sends to
 * rank+1 and receives from rank-1, all ranks in one group, out of place.
 *   mkccl-gpu-sendrecv-threads [-r RANKS] [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP]
 * Rank r runs on GPU r % (GPUs): several ranks share a GPU only with
 * MKCCL_ALLOW_SAME_GPU=1. Prints an nccl-tests-style table (busbw = algbw,
 * bytes per rank per second); after the timed calls each rank's output is
 * checked against its sender's input (every element tells rank, size and
 * index apart) and the guard words after it, and wrong elements are counted
 * on every rank. Exits 1 if any was wrong. */
#define _GNU_SOURCE
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nccl.h"

#define MAX_RANKS 16
#define GUARD 64 /* bytes after each output that must stay as set */

#define CHECK_CUDA(call)                                                                              \
  do {                                                                                                \
    cudaError_t e_ = (call);                                                                          \
    if (e_ != cudaSuccess) {                                                                          \
      fprintf(stderr, "mkccl-gpu-sendrecv-threads: %s failed: %s\n", #call, cudaGetErrorString(e_)); \
      exit(2);                                                                                        \
    }                                                                                                 \
  } while (0)
#define CHECK_NCCL(call)                                                                                  \
  do {                                                                                                    \
    if ((call) != ncclSuccess) {                                                                          \
      fprintf(stderr, "mkccl-gpu-sendrecv-threads: %s failed: %s\n", #call, ncclGetLastError(NULL)); \
      exit(2);                                                                                            \
    }                                                                                                     \
  } while (0)

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static size_t parse_size(const char* s) {
  char* end;
  double v = strtod(s, &end);
  switch (*end) {
    case 'G': case 'g': v *= 1024; /* fall through */
    case 'M': case 'm': v *= 1024; /* fall through */
    case 'K': case 'k': v *= 1024;
  }
  return (size_t)v;
}

/* Element i of rank r's input at size `bytes`. */
static uint32_t value(int r, size_t bytes, size_t i) {
  return (uint32_t)(i * 2654435761u) ^ ((uint32_t)r << 24) ^ (uint32_t)(bytes >> 2) * 40503u;
}

typedef struct {
  int dev;
  cudaStream_t stream;
  ncclComm_t comm;
  char *send, *recv;
} rank_t;

static void all_sync(rank_t* rk, int n) {
  for (int r = 0; r < n; r++) {
    CHECK_CUDA(cudaSetDevice(rk[r].dev));
    CHECK_CUDA(cudaStreamSynchronize(rk[r].stream));
  }
}

static void run_once(rank_t* rk, int n, size_t bytes) {
  CHECK_NCCL(ncclGroupStart());
  for (int r = 0; r < n; r++) {
    CHECK_NCCL(ncclSend(rk[r].send, bytes, ncclUint8, (r + 1) % n, rk[r].comm, rk[r].stream));
    CHECK_NCCL(ncclRecv(rk[r].recv, bytes, ncclUint8, (r + n - 1) % n, rk[r].comm, rk[r].stream));
  }
  CHECK_NCCL(ncclGroupEnd());
}

/* Wrong elements (and guard bytes) of rank r's output. */
static long check_rank(rank_t* rk, int n, int r, size_t bytes, uint8_t* host) {
  CHECK_CUDA(cudaSetDevice(rk[r].dev));
  CHECK_CUDA(cudaMemcpy(host, rk[r].recv, bytes + GUARD, cudaMemcpyDeviceToHost));
  int from = (r + n - 1) % n;
  long wrong = 0;
  size_t words = bytes / 4;
  const uint32_t* w = (const uint32_t*)host;
  for (size_t i = 0; i < words; i++) wrong += w[i] != value(from, bytes, i);
  for (size_t i = words * 4; i < bytes; i++) wrong += host[i] != (uint8_t)value(from, bytes, words + i);
  for (size_t i = bytes; i < bytes + GUARD; i++) wrong += host[i] != 0xA5;
  return wrong;
}

static void fill_rank(rank_t* rk, int r, size_t bytes, uint8_t* host) {
  size_t words = bytes / 4;
  uint32_t* w = (uint32_t*)host;
  for (size_t i = 0; i < words; i++) w[i] = value(r, bytes, i);
  for (size_t i = words * 4; i < bytes; i++) host[i] = (uint8_t)value(r, bytes, words + i);
  CHECK_CUDA(cudaSetDevice(rk[r].dev));
  CHECK_CUDA(cudaMemcpy(rk[r].send, host, bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(rk[r].recv, 0xA5, bytes + GUARD));
}

int main(int argc, char** argv) {
  int n = 2, iters = 20, warmup = 5;
  size_t minB = 8, maxB = 256u << 20;
  double factor = 4;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-r")) n = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-b")) minB = parse_size(argv[i + 1]);
    else if (!strcmp(argv[i], "-e")) maxB = parse_size(argv[i + 1]);
    else if (!strcmp(argv[i], "-f")) factor = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "-n")) iters = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-w")) warmup = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "usage: %s [-r RANKS] [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP]\n", argv[0]);
      return 2;
    }
  }
  if (n < 2 || n > MAX_RANKS || minB < 1 || maxB < minB || factor <= 1 || iters < 1 || warmup < 0) {
    fprintf(stderr, "mkccl-gpu-sendrecv-threads: bad arguments (2..%d ranks, 1 <= MIN <= MAX, FACTOR > 1)\n",
            MAX_RANKS);
    return 2;
  }
  int ndev = 0;
  CHECK_CUDA(cudaGetDeviceCount(&ndev));
  rank_t rk[MAX_RANKS];
  int devs[MAX_RANKS];
  ncclComm_t comms[MAX_RANKS];
  for (int r = 0; r < n; r++) devs[r] = r % ndev;
  CHECK_NCCL(ncclCommInitAll(comms, n, devs));
  for (int r = 0; r < n; r++) {
    rk[r].dev = devs[r];
    rk[r].comm = comms[r];
    CHECK_CUDA(cudaSetDevice(rk[r].dev));
    CHECK_CUDA(cudaStreamCreateWithFlags(&rk[r].stream, cudaStreamNonBlocking));
    CHECK_CUDA(cudaMalloc((void**)&rk[r].send, maxB));
    CHECK_CUDA(cudaMalloc((void**)&rk[r].recv, maxB + GUARD));
  }
  uint8_t* host = malloc(maxB + GUARD);
  if (!host) return 2;
  const char* direct = getenv("NCCL_P2P_DIRECT_DISABLE");
  printf("# Send/Recv to rank+1 from rank-1, %d ranks in one process on %d GPU(s), NCCL_P2P_DIRECT_DISABLE=%s\n", n,
         ndev < n ? ndev : n, direct ? direct : "(unset)");
  printf("#%11s %12s %10s %8s %8s %7s\n", "size(B)", "time(us)", "algbw", "busbw", "#wrong", "ranks");
  long anyWrong = 0;
  for (size_t b = minB; b <= maxB; b = (size_t)((double)b * factor) > b ? (size_t)((double)b * factor) : b + 1) {
    for (int r = 0; r < n; r++) fill_rank(rk, r, b, host);
    all_sync(rk, n);
    for (int i = 0; i < warmup; i++) run_once(rk, n, b);
    all_sync(rk, n);
    double t0 = now_us();
    for (int i = 0; i < iters; i++) run_once(rk, n, b);
    all_sync(rk, n);
    double us = (now_us() - t0) / iters;
    long wrong = 0;
    char bad[64] = "";
    for (int r = 0; r < n; r++) {
      long w = check_rank(rk, n, r, b, host);
      if (w) snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "%s%d", *bad ? "," : "", r);
      wrong += w;
    }
    anyWrong += wrong;
    double gbs = (double)b / us / 1e3;
    printf(" %11zu %12.2f %10.2f %8.2f %8ld %7s\n", b, us, gbs, gbs, wrong, *bad ? bad : "-");
  }
  for (int r = 0; r < n; r++) {
    CHECK_CUDA(cudaSetDevice(rk[r].dev));
    CHECK_CUDA(cudaFree(rk[r].send));
    CHECK_CUDA(cudaFree(rk[r].recv));
    CHECK_CUDA(cudaStreamDestroy(rk[r].stream));
    CHECK_NCCL(ncclCommDestroy(rk[r].comm));
  }
  free(host);
  if (anyWrong) fprintf(stderr, "mkccl-gpu-sendrecv-threads: %ld wrong elements\n", anyWrong);
  return anyWrong ? 1 : 0;
}
