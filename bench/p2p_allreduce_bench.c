/* mkccl-p2p-allreduce [BYTES] [ITERS]: a float-sum AllReduce made of two
 * groups of ncclSend/ncclRecv (each rank sends every peer its piece, sums
 * its own piece on the CPU, then sends the result to every peer), timed
 * next to ncclAllReduce on the same buffers, and, for a power-of-two
 * number of ranks, recursive halving and doubling made the same way.
 * Prototypes of such AllReduces over the public API (docs/perf/host-net.md):
 * they show what the library's Send/Recv gives such algorithms, not what
 * native ones would. Host buffers; ranks from mkccl-run. Prints; checks the
 * sums (small integers, exact in float) and reports wrong elements. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "nccl.h"

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static int env_int(const char* name, int dflt) {
  const char* v = getenv(name);
  return v ? atoi(v) : dflt;
}

#define CHECK_NCCL(call)                                                                    \
  do {                                                                                      \
    if ((call) != ncclSuccess) {                                                            \
      fprintf(stderr, "mkccl-p2p-allreduce: %s failed: %s\n", #call, ncclGetLastError(NULL)); \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

/* Pieces to and from every peer, in one group. */
static void exchange(ncclComm_t comm, int rank, int n, const float* const* out, float* const* in, size_t piece) {
  CHECK_NCCL(ncclGroupStart());
  for (int p = 0; p < n; p++) {
    if (p == rank) continue;
    CHECK_NCCL(ncclSend(out[p], piece, ncclFloat, p, comm, NULL));
    CHECK_NCCL(ncclRecv(in[p], piece, ncclFloat, p, comm, NULL));
  }
  CHECK_NCCL(ncclGroupEnd());
}

static void two_step(ncclComm_t comm, int rank, int n, const float* s, float* r, float* tmp, size_t piece) {
  const float* out[64];
  float* in[64];
  for (int p = 0; p < n; p++) out[p] = s + p * piece, in[p] = tmp + p * piece;
  exchange(comm, rank, n, out, in, piece);
  float* mine = r + rank * piece;
  for (size_t i = 0; i < piece; i++) {
    float acc = 0;
    for (int p = 0; p < n; p++) acc += p == rank ? s[rank * piece + i] : tmp[p * piece + i];
    mine[i] = acc;
  }
  for (int p = 0; p < n; p++) out[p] = mine, in[p] = r + p * piece;
  exchange(comm, rank, n, out, in, piece);
}

/* One pairwise exchange: count elements each way with peer, in one group. */
static void swap_with(ncclComm_t comm, int peer, const float* out, float* in, size_t count) {
  CHECK_NCCL(ncclGroupStart());
  CHECK_NCCL(ncclSend(out, count, ncclFloat, peer, comm, NULL));
  CHECK_NCCL(ncclRecv(in, count, ncclFloat, peer, comm, NULL));
  CHECK_NCCL(ncclGroupEnd());
}

/* Recursive halving then doubling (n a power of two): log2(n) exchanges of
 * halves that shrink, each summed on the CPU, then log2(n) that grow back.
 * Each rank talks to one peer at a time; 2 log2(n) dependent hops. */
static void halving_doubling(ncclComm_t comm, int rank, int n, const float* s, float* r, float* tmp, size_t count) {
  size_t lo = 0, len = count;
  for (size_t i = 0; i < count; i++) r[i] = s[i];
  for (int d = n / 2; d >= 1; d /= 2) {
    int peer = rank ^ d;
    size_t half = len / 2;
    size_t keep = (rank & d) ? lo + half : lo, give = (rank & d) ? lo : lo + half;
    swap_with(comm, peer, r + give, tmp, half);
    for (size_t i = 0; i < half; i++) r[keep + i] += tmp[i];
    lo = keep, len = half;
  }
  for (int d = 1; d < n; d *= 2) {
    int peer = rank ^ d;
    size_t other = (rank & d) ? lo - len : lo + len;
    swap_with(comm, peer, r + lo, r + other, len);
    if (other < lo) lo = other;
    len *= 2;
  }
}

int main(int argc, char** argv) {
  int rank = env_int("MKCCL_RUN_RANK", 0), n = env_int("MKCCL_RUN_NRANKS", 1);
  size_t bytes = argc > 1 ? (size_t)atol(argv[1]) : 1 << 20;
  int iters = argc > 2 ? atoi(argv[2]) : 200;
  if (n < 2 || n > 64 || iters < 1 || bytes / 4 < (size_t)n) {
    fprintf(stderr, "usage: mkccl-run -n N(2..64) -- mkccl-p2p-allreduce [BYTES] [ITERS]\n");
    return 2;
  }
  size_t piece = bytes / 4 / (size_t)n, count = piece * (size_t)n;
  ncclUniqueId id;
  ncclComm_t comm;
  CHECK_NCCL(ncclGetUniqueId(&id));
  CHECK_NCCL(ncclCommInitRank(&comm, n, id, rank));
  float *s = malloc(count * 4), *r = malloc(count * 4), *tmp = malloc(count * 4);
  if (!s || !r || !tmp) return 1;
  for (size_t i = 0; i < count; i++) s[i] = (float)((i + (size_t)rank) % 7);
  int pow2 = (n & (n - 1)) == 0 && count % (size_t)n == 0;
  static const char* names[] = {"ring", "two-step", "halv-dbl"};
  for (int round = 0; round < 2; round++)
    for (int algo = 0; algo < (pow2 ? 3 : 2); algo++) {
      double t0 = 0;
      for (int it = -30; it < iters; it++) {
        if (it == 0) t0 = now_us();
        if (algo == 1) two_step(comm, rank, n, s, r, tmp, piece);
        else if (algo == 2) halving_doubling(comm, rank, n, s, r, tmp, count);
        else CHECK_NCCL(ncclAllReduce(s, r, count, ncclFloat, ncclSum, comm, NULL));
      }
      double us = (now_us() - t0) / iters;
      long wrong = 0;
      for (size_t i = 0; i < count; i++) {
        float want = 0;
        for (int p = 0; p < n; p++) want += (float)((i + (size_t)p) % 7);
        wrong += r[i] != want;
      }
      if (rank == 0)
        printf("%-9s %10zu B  %9.1f us  busbw %6.2f GB/s  #wrong %ld\n", names[algo], count * 4, us,
               2.0 * (n - 1) / n * (double)(count * 4) / us / 1e3, wrong);
    }
  CHECK_NCCL(ncclCommDestroy(comm));
  free(s);
  free(r);
  free(tmp);
  return 0;
}
