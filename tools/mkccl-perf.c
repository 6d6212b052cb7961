/* mkccl-perf: the nccl-tests table for mkccl (or any libnccl.so.2).
 *
 *   mkccl-run -n 4 -- mkccl-perf all_reduce -b 8 -e 256M -f 2
 *
 * Ranks come from MKCCL_RUN_RANK/MKCCL_RUN_NRANKS (mkccl-run) or Open MPI's
 * OMPI_COMM_WORLD_RANK/SIZE; every rank builds the same unique id from
 * NCCL_COMM_ID. Buffers are host memory. Times are rank 0's averages over
 * -n iterations after -w warm-up ones (and, first, -w at the largest and the
 * smallest size, as nccl-tests); bus bandwidth uses nccl-tests'
 * factors; with -c 1 every rank checks its result (#wrong = bad elements).
 * MKCCL_PERF_SPREAD=1: each iteration also timed alone (synchronized); rank 0
 * prints the fastest, median and slowest to stderr.
 *
 * Built a second time as mkccl-perf-gpu (-DMKCCL_PERF_GPU): GPU buffers,
 * rank r on GPU r % ndev, launches on a stream and synchronizes it. That
 * binary links libnccl.so.2, so LD_LIBRARY_PATH picks mkccl's or NCCL's:
 * the same benchmark measures both. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nccl.h"

#ifdef MKCCL_PERF_GPU
#include <cuda_runtime.h>
static cudaStream_t perf_stream;
#define PERF_STREAM perf_stream
static void* perf_alloc(size_t b) {
  void* p = NULL;
  if (cudaMalloc(&p, b) != cudaSuccess) return NULL;
  cudaMemset(p, 0, b);
  return p;
}
static void perf_free(void* p) { cudaFree(p); }
/* On the benchmark's stream, then waited for: cudaMemcpy from pageable
 * memory returns once the source is staged, before the DMA has written the
 * device buffer, and the legacy stream does not order it before work on a
 * non-blocking stream. A collective launched right after a refill then read
 * stale data, and the in-place checks reported wrong elements with NCCL and
 * mkccl alike (AllReduce at 1 and 2 MB on 2 H200s). */
static void perf_copy(void* d, const void* s, size_t b) {
  cudaMemcpyAsync(d, s, b, cudaMemcpyDefault, perf_stream);
  cudaStreamSynchronize(perf_stream);
}
static void perf_sync(void) { cudaStreamSynchronize(perf_stream); }
#define PERF_MEM "GPU memory"
#else
#define PERF_STREAM NULL
static void* perf_alloc(size_t b) {
  void* p = aligned_alloc(4096, (b + 4095) / 4096 * 4096);
  if (p) memset(p, 0, b);
  return p;
}
static void perf_free(void* p) { free(p); }
static void perf_copy(void* d, const void* s, size_t b) { memcpy(d, s, b); }
static void perf_sync(void) {}
#define PERF_MEM "host memory"
#endif

typedef enum { ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, BROADCAST, REDUCE, SENDRECV, ALLTOALL, GATHER, SCATTER } coll_t;
static const char* coll_names[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce",
                                   "sendrecv",   "alltoall",   "gather",         "scatter"};
static const char* type_names[] = {"int8", "uint8", "int32", "uint32", "int64", "uint64",
                                   "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2"};
static const int type_sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
static const char* op_names[] = {"sum", "prod", "max", "min", "avg"};

typedef struct {
  coll_t coll;
  size_t minBytes, maxBytes;
  double factor;
  int iters, warmup, check, root;
  ncclDataType_t type;
  ncclRedOp_t op;
  int rank, nranks;
  ncclComm_t comm;
} opts_t;

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* One line per size: the fastest, median and slowest iteration, and how
 * many took over 4x the median (stalls). Sorts `t`. */
static void print_spread(size_t bytes, int inPlace, double* t, int n) {
  if (n < 1) return;
  qsort(t, (size_t)n, sizeof(*t), cmp_double);
  double med = t[n / 2], total = 0, slowTime = 0;
  int slow = 0;
  for (int i = 0; i < n; i++) {
    total += t[i];
    if (t[i] > 4 * med) {
      slow++;
      slowTime += t[i];
    }
  }
  fprintf(stderr, "# spread %zu B %s: min %.2f median %.2f max %.2f us; %d of %d over 4x median, %.0f%% of the time\n",
          bytes, inPlace ? "in-place" : "out-of-place", t[0], med, t[n - 1], slow, n,
          total > 0 ? 100.0 * slowTime / total : 0.0);
}

static size_t parse_size(const char* s) {
  char* end;
  double v = strtod(s, &end);
  switch (*end) {
    case 'K': case 'k': v *= 1024; break;
    case 'M': case 'm': v *= 1024 * 1024; break;
    case 'G': case 'g': v *= 1024.0 * 1024 * 1024; break;
  }
  return (size_t)v;
}

static int env_int(const char* a, const char* b, int def) {
  const char* v = getenv(a);
  if (!v) v = getenv(b);
  return v ? atoi(v) : def;
}

/* Values small enough to stay exact in every type, even fp8 sums. */
static double pattern(int rank, size_t i) { return (double)((rank + (int)(i % 3)) % 3); }

static float half_to_float(uint16_t h) {
  uint32_t s = (uint32_t)(h >> 15), e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v = e == 0 ? ldexpf((float)m, -24) : ldexpf((float)(m | 0x400), (int)e - 25);
  return s ? -v : v;
}
static uint16_t float_to_half(float f) { /* exact small integers only */
  if (f == 0) return 0;
  int e;
  float m = frexpf(fabsf(f), &e);
  uint16_t bits = (uint16_t)(((e + 14) << 10) | ((uint32_t)(m * 2048) & 0x3ff));
  return f < 0 ? bits | 0x8000 : bits;
}
static uint8_t float_to_fp8(float f, int e5) { /* exact small non-negative integers */
  if (f == 0) return 0;
  int e;
  float m = frexpf(f, &e);
  int manBits = e5 ? 2 : 3, bias = e5 ? 15 : 7;
  return (uint8_t)(((e - 1 + bias) << manBits) | ((uint32_t)(m * (1 << (manBits + 1))) & ((1 << manBits) - 1)));
}
static float fp8_to_float(uint8_t v, int e5) {
  int manBits = e5 ? 2 : 3, bias = e5 ? 15 : 7;
  int e = v >> manBits & (e5 ? 31 : 15), m = v & ((1 << manBits) - 1);
  return e == 0 ? ldexpf((float)m, 1 - bias - manBits) : ldexpf((float)((1 << manBits) | m), e - bias - manBits);
}

static void store(ncclDataType_t t, void* p, size_t i, double v) {
  switch (t) {
    case ncclInt8: ((int8_t*)p)[i] = (int8_t)v; break;
    case ncclUint8: ((uint8_t*)p)[i] = (uint8_t)v; break;
    case ncclInt32: ((int32_t*)p)[i] = (int32_t)v; break;
    case ncclUint32: ((uint32_t*)p)[i] = (uint32_t)v; break;
    case ncclInt64: ((int64_t*)p)[i] = (int64_t)v; break;
    case ncclUint64: ((uint64_t*)p)[i] = (uint64_t)v; break;
    case ncclFloat16: ((uint16_t*)p)[i] = float_to_half((float)v); break;
    case ncclFloat32: ((float*)p)[i] = (float)v; break;
    case ncclFloat64: ((double*)p)[i] = v; break;
    case ncclBfloat16: { float f = (float)v; uint32_t u; memcpy(&u, &f, 4); ((uint16_t*)p)[i] = (uint16_t)(u >> 16); break; }
    case ncclFloat8e4m3: ((uint8_t*)p)[i] = float_to_fp8((float)v, 0); break;
    default: ((uint8_t*)p)[i] = float_to_fp8((float)v, 1); break;
  }
}
static double load(ncclDataType_t t, const void* p, size_t i) {
  switch (t) {
    case ncclInt8: return ((const int8_t*)p)[i];
    case ncclUint8: return ((const uint8_t*)p)[i];
    case ncclInt32: return ((const int32_t*)p)[i];
    case ncclUint32: return ((const uint32_t*)p)[i];
    case ncclInt64: return (double)((const int64_t*)p)[i];
    case ncclUint64: return (double)((const uint64_t*)p)[i];
    case ncclFloat16: return half_to_float(((const uint16_t*)p)[i]);
    case ncclFloat32: return ((const float*)p)[i];
    case ncclFloat64: return ((const double*)p)[i];
    case ncclBfloat16: { uint32_t u = (uint32_t)((const uint16_t*)p)[i] << 16; float f; memcpy(&f, &u, 4); return f; }
    case ncclFloat8e4m3: return fp8_to_float(((const uint8_t*)p)[i], 0);
    default: return fp8_to_float(((const uint8_t*)p)[i], 1);
  }
}

/* Element counts per rank of the send and receive buffers for `count`. */
static void buffer_counts(const opts_t* o, size_t count, size_t* sendCount, size_t* recvCount) {
  size_t n = (size_t)o->nranks;
  switch (o->coll) {
    case ALL_GATHER: *sendCount = count; *recvCount = count * n; break;
    case REDUCE_SCATTER: *sendCount = count * n; *recvCount = count; break;
    case ALLTOALL: *sendCount = count * n; *recvCount = count * n; break;
    case GATHER: *sendCount = count; *recvCount = count * n; break;
    case SCATTER: *sendCount = count * n; *recvCount = count; break;
    default: *sendCount = count; *recvCount = count; break;
  }
}

/* nccl-tests: size is the per-rank buffer size in bytes for its count. */
static size_t count_for_bytes(const opts_t* o, size_t bytes) {
  size_t ts = (size_t)type_sizes[o->type], n = (size_t)o->nranks;
  size_t count = bytes / ts;
  if (o->coll == ALL_GATHER || o->coll == REDUCE_SCATTER || o->coll == ALLTOALL || o->coll == GATHER ||
      o->coll == SCATTER)
    count /= n;
  return count;
}

static double bus_factor(const opts_t* o) {
  double n = o->nranks;
  switch (o->coll) {
    case ALL_REDUCE: return 2 * (n - 1) / n;
    case ALL_GATHER: case REDUCE_SCATTER: case ALLTOALL: case GATHER: case SCATTER: return (n - 1) / n;
    default: return 1;
  }
}

static ncclResult_t run_once(const opts_t* o, const void* s, void* r, size_t count) {
  int peerNext = (o->rank + 1) % o->nranks, peerPrev = (o->rank - 1 + o->nranks) % o->nranks;
  switch (o->coll) {
    case ALL_REDUCE: return ncclAllReduce(s, r, count, o->type, o->op, o->comm, PERF_STREAM);
    case ALL_GATHER: return ncclAllGather(s, r, count, o->type, o->comm, PERF_STREAM);
    case REDUCE_SCATTER: return ncclReduceScatter(s, r, count, o->type, o->op, o->comm, PERF_STREAM);
    case BROADCAST: return ncclBroadcast(s, r, count, o->type, o->root, o->comm, PERF_STREAM);
    case REDUCE: return ncclReduce(s, r, count, o->type, o->op, o->root, o->comm, PERF_STREAM);
    case SENDRECV: {
      ncclResult_t res = ncclGroupStart();
      if (res == ncclSuccess) res = ncclSend(s, count, o->type, peerNext, o->comm, PERF_STREAM);
      if (res == ncclSuccess) res = ncclRecv(r, count, o->type, peerPrev, o->comm, PERF_STREAM);
      ncclResult_t end = ncclGroupEnd();
      return res != ncclSuccess ? res : end;
    }
    case ALLTOALL: return ncclAlltoAll(s, r, count, o->type, o->comm, PERF_STREAM);
    case GATHER: return ncclGather(s, r, count, o->type, o->root, o->comm, PERF_STREAM);
    default: return ncclScatter(s, r, count, o->type, o->root, o->comm, PERF_STREAM);
  }
}

static double expected_reduce(const opts_t* o, size_t i) {
  double e = pattern(0, i);
  for (int k = 1; k < o->nranks; k++) {
    double v = pattern(k, i);
    switch (o->op) {
      case ncclProd: e *= v; break;
      case ncclMax: e = v > e ? v : e; break;
      case ncclMin: e = v < e ? v : e; break;
      default: e += v; break;
    }
  }
  if (o->op == ncclAvg) e = o->type <= ncclUint64 ? floor(e / o->nranks) : e / o->nranks;
  return e;
}

/* Wrong elements in this rank's result. */
static long check_result(const opts_t* o, const void* r, size_t count) {
  size_t sendCount, recvCount;
  buffer_counts(o, count, &sendCount, &recvCount);
  long wrong = 0;
  size_t n = (size_t)o->nranks;
  for (size_t i = 0; i < recvCount; i++) {
    double e;
    switch (o->coll) {
      case ALL_REDUCE: e = expected_reduce(o, i); break;
      case REDUCE: if (o->rank != o->root) return 0; e = expected_reduce(o, i); break;
      case REDUCE_SCATTER: e = expected_reduce(o, (size_t)o->rank * count + i); break;
      case ALL_GATHER: e = pattern((int)(i / count), i % count); break;
      case GATHER: if (o->rank != o->root) return 0; e = pattern((int)(i / count), i % count); break;
      case BROADCAST: e = pattern(o->root, i); break;
      case SENDRECV: e = pattern((o->rank - 1 + o->nranks) % o->nranks, i); break;
      case ALLTOALL: e = pattern((int)(i / count), (size_t)o->rank * count + i % count); break;
      default: e = pattern(o->root, (size_t)o->rank * count + i); break; /* scatter */
    }
    if (load(o->type, r, i) != e) wrong++;
    (void)n;
  }
  return wrong;
}

/* Every rank waits for all (a tiny allreduce). */
static void barrier(const opts_t* o) {
  /* In the buffers' memory: a GPU communicator takes no host pointer. */
  static void* x;
  if (!x) x = perf_alloc(sizeof(float));
  if (x) ncclAllReduce(x, x, 1, ncclFloat, ncclSum, o->comm, PERF_STREAM);
  perf_sync();
}

static char* stage; /* host image of a buffer: filled, then copied to (or from) the buffers */

/* Fill `n` elements of `dst` with this rank's pattern. */
static void fill(const opts_t* o, char* dst, size_t n) {
  for (size_t i = 0; i < n; i++) store(o->type, stage, i, pattern(o->rank, i));
  perf_copy(dst, stage, n * (size_t)type_sizes[o->type]);
}

static int run_size(opts_t* o, size_t bytes, char* s, char* r, char* rIn, double* busSum) {
  size_t count = count_for_bytes(o, bytes), ts = (size_t)type_sizes[o->type];
  size_t sendCount, recvCount;
  buffer_counts(o, count, &sendCount, &recvCount);
  double t[2] = {0, 0}, alg[2], bus[2];
  /* MKCCL_PERF_SPREAD: time each iteration alone (synchronized) and print
   * their spread, to tell one stall from a uniformly slow run. */
  int spread = getenv("MKCCL_PERF_SPREAD") != NULL;
  long wrong[2] = {0, 0};
  for (int inPlace = 0; inPlace < 2; inPlace++) {
    /* In place: the send buffer is (the rank's block of) the receive buffer. */
    char* sb = s;
    char* rb = r;
    if (inPlace) {
      rb = rIn;
      size_t at = 0;
      if (o->coll == ALL_GATHER || o->coll == GATHER) at = (size_t)o->rank * count * ts;
      sb = rb + at;
      if (o->coll == REDUCE_SCATTER || o->coll == SCATTER) {
        sb = rIn;
        rb = rIn + (size_t)o->rank * count * ts;
      }
    }
    fill(o, sb, sendCount);
    for (int w = 0; w < o->warmup; w++)
      if (run_once(o, sb, rb, count) != ncclSuccess) return 1;
    barrier(o);
    double* each = spread ? malloc(sizeof(double) * (size_t)o->iters) : NULL;
    double t0 = now_us();
    for (int it = 0; it < o->iters; it++) {
      double ts0 = each ? now_us() : 0;
      if (run_once(o, sb, rb, count) != ncclSuccess) return 1;
      if (each) {
        perf_sync();
        each[it] = now_us() - ts0;
      }
    }
    double issued = now_us();
    if (each && o->rank == 0) print_spread(count * ts, inPlace, each, o->iters);
    free(each);
    perf_sync();
    t[inPlace] = (now_us() - t0) / o->iters;
    /* Host-bound or device-bound: what the calls alone cost per iteration. */
    if (o->rank == 0 && getenv("MKCCL_PERF_HOST_US"))
      fprintf(stderr, "# %zu B %s: calls %.2f us/iter, total %.2f us/iter\n", count * ts, inPlace ? "in-place" : "out-of-place",
              (issued - t0) / o->iters, t[inPlace]);
    /* Send/Recv in place sends the buffer the peer's data lands in: what
     * arrives first depends on timing, for NCCL too (nccl-tests does not
     * report errors there either). Not checked: its column says N/A. */
    int checked = o->check && !(inPlace && o->coll == SENDRECV);
    if (checked) {
      fill(o, sb, sendCount);
      if (run_once(o, sb, rb, count) != ncclSuccess) return 1;
      perf_sync();
      perf_copy(stage, rb, recvCount * ts);
      wrong[inPlace] = check_result(o, stage, count);
    } else if (o->check) {
      wrong[inPlace] = -1; /* N/A */
    }
    alg[inPlace] = t[inPlace] > 0 ? (double)(count * ts) * (o->coll == ALL_GATHER || o->coll == REDUCE_SCATTER || o->coll == ALLTOALL || o->coll == GATHER || o->coll == SCATTER ? o->nranks : 1) / t[inPlace] / 1e3 : 0;
    bus[inPlace] = alg[inPlace] * bus_factor(o);
  }
  long totalWrong = 0;
  for (int k = 0; k < 2; k++) totalWrong += wrong[k] > 0 ? wrong[k] : 0;
  if (o->rank == 0) {
    const char* op = (o->coll == ALL_REDUCE || o->coll == REDUCE || o->coll == REDUCE_SCATTER) ? op_names[o->op] : "none";
    int root = (o->coll == BROADCAST || o->coll == REDUCE || o->coll == GATHER || o->coll == SCATTER) ? o->root : -1;
    char w0[24], w1[24];
    snprintf(w0, sizeof(w0), wrong[0] < 0 ? "N/A" : "%ld", wrong[0]);
    snprintf(w1, sizeof(w1), wrong[1] < 0 ? "N/A" : "%ld", wrong[1]);
    printf("%12zu  %12zu  %8s  %6s  %6d  %8.2f  %6.2f  %6.2f  %6s  %8.2f  %6.2f  %6.2f  %6s\n", count * ts * (recvCount > count || sendCount > count ? (size_t)o->nranks : 1),
           count, type_names[o->type], op, root, t[0], alg[0], bus[0], w0, t[1], alg[1], bus[1], w1);
    fflush(stdout);
  }
  *busSum += bus[0];
  return totalWrong != 0 ? 2 : 0;
}

static void usage(void) {
  fprintf(stderr,
          "usage: mkccl-perf COLL [-b minBytes] [-e maxBytes] [-f factor] [-n iters] [-w warmup] [-c 0|1]\n"
          "                  [-o sum|prod|max|min|avg] [-d TYPE] [-r root]\n"
          "  COLL: all_reduce all_gather reduce_scatter broadcast reduce sendrecv alltoall gather scatter\n"
          "  TYPE: int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 f8e4m3 f8e5m2\n");
}

int main(int argc, char** argv) {
  opts_t o = {ALL_REDUCE, 8, 64 * 1024 * 1024, 2, 20, 5, 1, 0, ncclFloat, ncclSum, 0, 1, NULL};
  if (argc < 2) {
    usage();
    return 2;
  }
  int found = 0;
  for (int c = 0; c <= SCATTER; c++)
    if (strcmp(argv[1], coll_names[c]) == 0) o.coll = (coll_t)c, found = 1;
  if (!found) {
    usage();
    return 2;
  }
  for (int i = 2; i + 1 < argc; i += 2) {
    const char* f = argv[i];
    const char* v = argv[i + 1];
    if (!strcmp(f, "-b")) o.minBytes = parse_size(v);
    else if (!strcmp(f, "-e")) o.maxBytes = parse_size(v);
    else if (!strcmp(f, "-f")) o.factor = atof(v);
    else if (!strcmp(f, "-n")) o.iters = atoi(v);
    else if (!strcmp(f, "-w")) o.warmup = atoi(v);
    else if (!strcmp(f, "-c")) o.check = atoi(v);
    else if (!strcmp(f, "-r")) o.root = atoi(v);
    else if (!strcmp(f, "-o")) {
      for (int k = 0; k < 5; k++) if (!strcmp(v, op_names[k])) o.op = (ncclRedOp_t)k;
    } else if (!strcmp(f, "-d")) {
      for (int k = 0; k < 12; k++) if (!strcmp(v, type_names[k])) o.type = (ncclDataType_t)k;
    } else {
      usage();
      return 2;
    }
  }
  o.rank = env_int("MKCCL_RUN_RANK", "OMPI_COMM_WORLD_RANK", 0);
  o.nranks = env_int("MKCCL_RUN_NRANKS", "OMPI_COMM_WORLD_SIZE", 1);
  if (o.factor < 1.01) o.factor = 2;
#ifdef MKCCL_PERF_GPU
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
    fprintf(stderr, "mkccl-perf: no CUDA device\n");
    return 1;
  }
  cudaSetDevice(o.rank % ndev);
  cudaStreamCreateWithFlags(&perf_stream, cudaStreamNonBlocking);
#endif
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) {
    fprintf(stderr, "mkccl-perf: ncclGetUniqueId failed: %s\n", ncclGetLastError(NULL));
    return 1;
  }
  double initStart = now_us();
  if (ncclCommInitRank(&o.comm, o.nranks, id, o.rank) != ncclSuccess) {
    fprintf(stderr, "mkccl-perf: rank %d: ncclCommInitRank failed: %s\n", o.rank, ncclGetLastError(NULL));
    return 1;
  }
  double initMs = (now_us() - initStart) / 1e3;
  size_t maxElems = o.maxBytes / (size_t)type_sizes[o.type] + 16;
  size_t span = maxElems * (size_t)type_sizes[o.type] * (o.coll == ALL_REDUCE || o.coll == BROADCAST || o.coll == REDUCE || o.coll == SENDRECV ? 1 : 1);
  char* s = perf_alloc(span);
  char* r = perf_alloc(span);
  char* rIn = perf_alloc(span);
  stage = malloc(span);
  if (!s || !r || !rIn || !stage) {
    fprintf(stderr, "mkccl-perf: cannot allocate 3 x %zu bytes\n", span);
    return 1;
  }
  if (o.rank == 0) {
    int v;
    ncclGetVersion(&v);
    printf("# mkccl-perf %s: %d ranks, " PERF_MEM ", NCCL API %d, iters %d, warmup %d, check %d\n", coll_names[o.coll],
           o.nranks, v, o.iters, o.warmup, o.check);
    printf("# ncclCommInitRank: %.1f ms (rank 0)\n", initMs);
    printf("#\n#%79s%37s\n", "out-of-place", "in-place");
    printf("#%11s  %12s  %8s  %6s  %6s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  %6s\n", "size", "count", "type", "redop",
           "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
    printf("#%11s  %12s  %8s  %6s  %6s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  %6s\n", "(B)", "(elements)", "", "", "",
           "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  }
  /* As nccl-tests: warm up at the largest size, then the smallest, before
   * any size is timed (each size then has its own -w as well). The first
   * size timed after start-up alone ran at a fraction of its speed in some
   * 4-rank host runs (docs/PERFORMANCE.md, eighth session). */
  size_t ends[2] = {o.maxBytes, o.minBytes};
  for (int e = 0; e < 2; e++)
    for (int w = 0; w < o.warmup; w++)
      if (run_once(&o, s, r, count_for_bytes(&o, ends[e])) != ncclSuccess) {
        fprintf(stderr, "mkccl-perf: rank %d: warm-up %s failed: %s\n", o.rank, coll_names[o.coll], ncclGetLastError(NULL));
        return 1;
      }
  perf_sync();
  int rc = 0, nSizes = 0;
  double busSum = 0;
  for (size_t b = o.minBytes; b <= o.maxBytes; b = (size_t)((double)b * o.factor)) {
    int r2 = run_size(&o, b, s, r, rIn, &busSum);
    if (r2 == 1) {
      fprintf(stderr, "mkccl-perf: rank %d: %s failed: %s\n", o.rank, coll_names[o.coll], ncclGetLastError(NULL));
      rc = 1;
      break;
    }
    if (r2 == 2) rc = 3;
    nSizes++;
    if (b == 0) break;
  }
  if (o.rank == 0) {
    printf("# Out of bounds values : 0 OK\n");
    printf("# Avg bus bandwidth    : %g\n#\n", nSizes ? busSum / nSizes : 0);
  }
  ncclCommDestroy(o.comm);
  perf_free(s);
  perf_free(r);
  perf_free(rIn);
  free(stage);
  return rc;
}
