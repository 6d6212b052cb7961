/* mkccl-perf: the nccl-tests table for mkccl (or any libnccl.so.2).
 *
 *   mkccl-run -n 4 -- mkccl-perf all_reduce -b 8 -e 256M -f 2
 *
 * Ranks come from MKCCL_RUN_RANK/MKCCL_RUN_NRANKS (mkccl-run) or Open MPI's
 * OMPI_COMM_WORLD_RANK/SIZE; every rank builds the same unique id from
 * NCCL_COMM_ID. Buffers are host memory. Times are rank 0's averages over
 * -n iterations after -w warm-up ones (and, first, -w at the largest and the
 * smallest size, as nccl-tests); bus bandwidth uses nccl-tests'
 * factors; with -c 1 every rank checks its result on data distinct for every
 * rank and element (#wrong: bad elements of all ranks, summed as nccl-tests
 * does; the footer's out-of-bounds count sums every size, and any wrong
 * element makes every rank exit 3).
 * MKCCL_PERF_SPREAD=1: each iteration also timed alone (synchronized); rank 0
 * prints the fastest, median and slowest to stderr.
 *
 * Built a second time as mkccl-perf-gpu (-DMKCCL_PERF_GPU): GPU buffers,
 * rank r on GPU r % ndev, launches on a stream and synchronizes it. That
 * binary links libnccl.so.2, so LD_LIBRARY_PATH picks mkccl's or NCCL's:
 * the same benchmark measures both. With --symm 1 its three buffers come
 * from ncclMemAlloc and are registered as windows with
 * NCCL_WIN_COLL_SYMMETRIC (NCCL's symmetric kernels; mkccl's too, unless
 * MKCCL_SYMM_MAX_BYTES=0 sends the same buffers through the rings).
 * With --reg 1 the three buffers are registered with ncclCommRegister (on
 * host communicators over SHM, registered send buffers are read in place by
 * their receivers: plugins/transport-shm; over the net, Send/Recv goes out
 * of and lands in them in place: plugins/transport-net); with --thp 1 (host
 * buffers) they are asked for transparent huge pages (madvise
 * MADV_HUGEPAGE); with --mem 1 (host buffers) they come from ncclMemAlloc,
 * which gives shareable host memory where there is no GPU (its receivers
 * map it and copy from it in place). */
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
#define PERF_MEM (perf_symm ? "GPU memory in symmetric windows" : "GPU memory")
static int perf_symm;
/* The benchmark's buffers: cudaMalloc'ed, or (--symm 1) symmetric windows,
 * registered collectively (every rank allocates them at the same point). */
static void* perf_alloc_buf(ncclComm_t comm, size_t b, ncclWindow_t* win) {
  *win = NULL;
  if (!perf_symm) return perf_alloc(b);
  void* p = NULL;
  if (ncclMemAlloc(&p, b) != ncclSuccess) return NULL;
  cudaMemset(p, 0, b);
  cudaDeviceSynchronize();
  if (ncclCommWindowRegister(comm, p, b, win, NCCL_WIN_COLL_SYMMETRIC) != ncclSuccess) {
    fprintf(stderr, "mkccl-perf: ncclCommWindowRegister failed: %s\n", ncclGetLastError(comm));
    ncclMemFree(p);
    return NULL;
  }
  return p;
}
static void perf_free_buf(ncclComm_t comm, void* p, ncclWindow_t win) {
  if (!win) {
    perf_free(p);
    return;
  }
  ncclCommWindowDeregister(comm, win);
  ncclMemFree(p);
}
#else
#include <sys/mman.h>
#define PERF_STREAM NULL
static int perf_thp; /* --thp 1: buffers on 2 MB boundaries, asked for transparent huge pages */
static int perf_mem; /* --mem 1: buffers from ncclMemAlloc (shareable host memory where there is no GPU) */
static void* perf_alloc(size_t b) {
  if (perf_mem) {
    void* p = NULL;
    if (ncclMemAlloc(&p, b) != ncclSuccess) {
      fprintf(stderr, "mkccl-perf: ncclMemAlloc of %zu bytes failed: %s\n", b, ncclGetLastError(NULL));
      return NULL;
    }
    return p; /* zeroed */
  }
  size_t align = perf_thp ? (size_t)2 << 20 : 4096;
  void* p = aligned_alloc(align, (b + align - 1) / align * align);
  if (p && perf_thp) madvise(p, (b + align - 1) / align * align, MADV_HUGEPAGE);
  if (p) memset(p, 0, b);
  return p;
}
static void perf_free(void* p) {
  if (perf_mem) ncclMemFree(p);
  else free(p);
}
static void perf_copy(void* d, const void* s, size_t b) { memcpy(d, s, b); }
static void perf_sync(void) {}
#define PERF_MEM "host memory"
static void* perf_alloc_buf(ncclComm_t comm, size_t b, ncclWindow_t* win) {
  (void)comm;
  *win = NULL;
  return perf_alloc(b);
}
static void perf_free_buf(ncclComm_t comm, void* p, ncclWindow_t win) {
  (void)comm, (void)win;
  perf_free(p);
}
#endif

typedef enum { ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, BROADCAST, REDUCE, SENDRECV, ALLTOALL, GATHER, SCATTER } coll_t;
static int perf_reg; /* --reg 1: buffers registered with ncclCommRegister */
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
  int corrupt;    /* --corrupt R (tests): rank R alters one element of each result it checks; -1 none */
  uint64_t seed;  /* of the check pattern of the size in hand */
  long wrongSum;  /* wrong elements of every rank and size so far */
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

/* ---- the check pattern (-c 1) ----
 * Moved data: the sender's rank in the low 4 bits, a hash of the size, the
 * rank and the element above (bits compared as they are), so every rank's
 * data differs from every other's at every element. Reduced data: each
 * element's inputs are a row of small integers (picked by the element's
 * hash) rotated by rank, so every partial sum and product is exact in every
 * type (fp8 e5m2 holds the integers to 8); float Avg over a rank count that
 * is not a power of two rounds 1/n and is checked within that rounding. */
static uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
static uint64_t elem_hash(uint64_t seed, int rank, size_t i) {
  return mix64(seed ^ (uint64_t)i ^ ((uint64_t)(uint8_t)(rank + 1) << 56));
}
static int is_float(ncclDataType_t t) { return t >= ncclFloat16; }
static uint64_t load_bits(ncclDataType_t t, const void* p, size_t i) {
  uint64_t b = 0;
  memcpy(&b, (const char*)p + i * (size_t)type_sizes[t], (size_t)type_sizes[t]); /* little-endian */
  return b;
}
static void store_bits(ncclDataType_t t, void* p, size_t i, uint64_t b) {
  memcpy((char*)p + i * (size_t)type_sizes[t], &b, (size_t)type_sizes[t]);
}
static int coll_reduces(coll_t c) { return c == ALL_REDUCE || c == REDUCE_SCATTER || c == REDUCE; }

static uint64_t move_bits(const opts_t* o, int rank, size_t i) {
  static const uint64_t topExp[] = {0, 0, 0, 0, 0, 0, 1u << 14, 1u << 30, 1ull << 62, 1u << 14, 1u << 6, 1u << 6};
  int ts = type_sizes[o->type];
  uint64_t mask = ts == 8 ? ~0ull : (1ull << (8 * ts)) - 1;
  return ((elem_hash(o->seed, rank, i) << 4) | (uint64_t)(rank & 15)) & mask & ~topExp[o->type];
}

/* The contiguous integers of a type: sums within them are exact. */
static double sum_bound(ncclDataType_t t) { /* uint8: 255 is the poison */
  static const double b[] = {127, 254, 1 << 30, 1 << 30, 1 << 30, 1 << 30, 2048, 1 << 24, 1 << 30, 256, 16, 8};
  return b[t];
}
#define CHECK_ROWS 64
static double *rowIn, rowExpect[CHECK_ROWS], rowTol[CHECK_ROWS]; /* rowIn: CHECK_ROWS x nranks */

/* What a result buffer holds before the checked run: NaN, or all ones (an
 * integer no result has: the check's values are small and non-negative,
 * moved ones carry a rank below 15 in their low bits). */
static uint64_t poison_bits(ncclDataType_t t) {
  static const uint64_t nan[] = {0, 0, 0, 0, 0, 0, 0x7e00, 0x7fc00000, 0x7ff8000000000000ull, 0x7fc0, 0x7f, 0x7f};
  int ts = type_sizes[t];
  return is_float(t) ? nan[t] : ts == 8 ? ~0ull : (1ull << (8 * ts)) - 1;
}

/* The rows of the size in hand (every rank makes the same). */
static void check_rows(const opts_t* o) {
  int n = o->nranks, op = o->op;
  double m = floor(sum_bound(o->type) / n);
  for (int j = 0; j < CHECK_ROWS; j++) {
    int twos = 0;
    double e = 0, mag = 0;
    for (int k = 0; k < n; k++) {
      uint64_t h = mix64(o->seed ^ ((uint64_t)(j * 64 + k) << 40));
      double v;
      if (op == ncclProd) { /* 1 or 2, at most 6 twos (int8 holds 64) */
        v = (h & 1) && twos < 6 ? 2 : 1;
        twos += v == 2;
      } else { /* Max and Min: any of the type's contiguous integers */
        double top = op == ncclMax || op == ncclMin ? sum_bound(o->type) : m;
        v = (double)((h >> 32) % (uint64_t)(top + 1));
      }
      rowIn[j * n + k] = v;
      mag += v;
      if (k == 0) e = v;
      else if (op == ncclProd) e *= v;
      else if (op == ncclMax) e = v > e ? v : e;
      else if (op == ncclMin) e = v < e ? v : e;
      else e += v;
    }
    rowTol[j] = 0;
    if (op == ncclAvg) {
      e = is_float(o->type) ? e / n : floor(e / n);
      /* A float Avg multiplies by 1/n, inexact unless n is a power of two. */
      if (is_float(o->type) && (n & (n - 1))) {
        static const int bits[] = {0, 0, 0, 0, 0, 0, 11, 24, 53, 8, 4, 3};
        rowTol[j] = (n + 2) * ldexp(1, -bits[o->type]) * mag / n;
      }
    }
    rowExpect[j] = e;
  }
}
static int check_row(const opts_t* o, size_t i, int* rot) {
  uint64_t h = elem_hash(o->seed, -1, i);
  *rot = (int)((h >> 32) % (uint64_t)o->nranks);
  return (int)(h % CHECK_ROWS);
}
static double reduce_in(const opts_t* o, int rank, size_t i) {
  int rot, j = check_row(o, i, &rot);
  return rowIn[j * o->nranks + (rank + rot) % o->nranks];
}

/* Element i of this rank's input, into p. */
static void pattern_store(const opts_t* o, void* p, size_t i) {
  if (coll_reduces(o->coll)) store(o->type, p, i, reduce_in(o, o->rank, i));
  else store_bits(o->type, p, i, move_bits(o, o->rank, i));
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

/* Wrong elements in this rank's result. */
static long check_result(const opts_t* o, const void* r, size_t count) {
  size_t sendCount, recvCount;
  buffer_counts(o, count, &sendCount, &recvCount);
  if ((o->coll == REDUCE || o->coll == GATHER) && o->rank != o->root) return 0;
  long wrong = 0;
  for (size_t i = 0; i < recvCount; i++) {
    if (coll_reduces(o->coll)) {
      int rot, j = check_row(o, o->coll == REDUCE_SCATTER ? (size_t)o->rank * count + i : i, &rot);
      double got = load(o->type, r, i);
      wrong += !(fabs(got - rowExpect[j]) <= rowTol[j]); /* NaN is wrong too */
      continue;
    }
    uint64_t e;
    switch (o->coll) {
      case ALL_GATHER: case GATHER: e = move_bits(o, (int)(i / count), i % count); break;
      case BROADCAST: e = move_bits(o, o->root, i); break;
      case SENDRECV: e = move_bits(o, (o->rank - 1 + o->nranks) % o->nranks, i); break;
      case ALLTOALL: e = move_bits(o, (int)(i / count), (size_t)o->rank * count + i % count); break;
      default: e = move_bits(o, o->root, (size_t)o->rank * count + i); break; /* scatter */
    }
    wrong += load_bits(o->type, r, i) != e;
  }
  return wrong;
}

/* The wrong elements of every rank, summed, as nccl-tests reports them:
 * every rank takes part (the communicator under test carries the sums). */
static void sum_over_ranks(const opts_t* o, long* wrong, int n) {
  static int64_t* d;
  int64_t h[2] = {0, 0};
  if (!d) d = perf_alloc(sizeof(h));
  if (!d) return;
  for (int k = 0; k < n; k++) h[k] = wrong[k] > 0 ? wrong[k] : 0;
  perf_copy(d, h, sizeof(h));
  ncclAllReduce(d, d, (size_t)n, ncclInt64, ncclSum, o->comm, PERF_STREAM);
  perf_sync();
  perf_copy(h, d, sizeof(h));
  for (int k = 0; k < n; k++)
    if (wrong[k] >= 0) wrong[k] = (long)h[k];
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
  for (size_t i = 0; i < n; i++) pattern_store(o, stage, i);
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
    o->seed = mix64(((uint64_t)o->coll << 56) ^ ((uint64_t)o->type << 48) ^ ((uint64_t)o->op << 40) ^
                    ((uint64_t)bytes << 1) ^ (uint64_t)inPlace);
    if (coll_reduces(o->coll)) check_rows(o);
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
      /* The timed runs left right results in place: poison them first. */
      for (size_t i = 0; i < recvCount; i++) store_bits(o->type, stage, i, poison_bits(o->type));
      perf_copy(rb, stage, recvCount * ts);
      fill(o, sb, sendCount);
      if (run_once(o, sb, rb, count) != ncclSuccess) return 1;
      perf_sync();
      perf_copy(stage, rb, recvCount * ts);
      /* As a wrong collective would: an integer one off, a float not written
       * (its poison: a flipped low bit can stay within a float sum's
       * tolerance). */
      if (o->corrupt == o->rank && recvCount > 0)
        store_bits(o->type, stage, recvCount - 1,
                   is_float(o->type) ? poison_bits(o->type) : load_bits(o->type, stage, recvCount - 1) ^ 1);
      wrong[inPlace] = check_result(o, stage, count);
    } else if (o->check) {
      wrong[inPlace] = -1; /* N/A */
    }
    alg[inPlace] = t[inPlace] > 0 ? (double)(count * ts) * (o->coll == ALL_GATHER || o->coll == REDUCE_SCATTER || o->coll == ALLTOALL || o->coll == GATHER || o->coll == SCATTER ? o->nranks : 1) / t[inPlace] / 1e3 : 0;
    bus[inPlace] = alg[inPlace] * bus_factor(o);
  }
  if (o->check) sum_over_ranks(o, wrong, 2);
  long totalWrong = 0;
  for (int k = 0; k < 2; k++) totalWrong += wrong[k] > 0 ? wrong[k] : 0;
  o->wrongSum += totalWrong;
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
          "                  [-o sum|prod|max|min|avg] [-d TYPE] [-r root] [--corrupt rank] [--symm 0|1]\n"
          "                  [--reg 0|1] [--thp 0|1] [--mem 0|1]\n"
          "  COLL: all_reduce all_gather reduce_scatter broadcast reduce sendrecv alltoall gather scatter\n"
          "  TYPE: int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 f8e4m3 f8e5m2\n"
          "  --corrupt: for tests of the check itself: that rank alters one element of each\n"
          "             result it checks, as a wrong collective would\n"
          "  --symm 1: (mkccl-perf-gpu) buffers from ncclMemAlloc in windows registered with\n"
          "            NCCL_WIN_COLL_SYMMETRIC\n"
          "  --reg 1: the buffers registered with ncclCommRegister\n"
          "  --thp 1: (host buffers) on 2 MB boundaries with madvise(MADV_HUGEPAGE)\n"
          "  --mem 1: (host buffers) from ncclMemAlloc (shareable host memory with no GPU)\n");
}

int main(int argc, char** argv) {
  opts_t o = {ALL_REDUCE, 8, 64 * 1024 * 1024, 2, 20, 5, 1, 0, ncclFloat, ncclSum, 0, 1, NULL, -1, 0, 0};
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
    else if (!strcmp(f, "--corrupt")) o.corrupt = atoi(v);
    else if (!strcmp(f, "--reg")) perf_reg = atoi(v);
#ifdef MKCCL_PERF_GPU
    else if (!strcmp(f, "--symm")) perf_symm = atoi(v);
#else
    else if (!strcmp(f, "--thp")) perf_thp = atoi(v);
    else if (!strcmp(f, "--mem")) perf_mem = atoi(v);
#endif
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
  rowIn = calloc((size_t)CHECK_ROWS * (size_t)(o.nranks > 0 ? o.nranks : 1), sizeof(double));
  if (!rowIn) return 1;
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
  ncclWindow_t sWin, rWin, rInWin;
  char* s = perf_alloc_buf(o.comm, span, &sWin);
  char* r = perf_alloc_buf(o.comm, span, &rWin);
  char* rIn = perf_alloc_buf(o.comm, span, &rInWin);
  stage = malloc(span);
  if (!s || !r || !rIn || !stage) {
    fprintf(stderr, "mkccl-perf: cannot allocate 3 x %zu bytes\n", span);
    return 1;
  }
  void* regs[3] = {NULL, NULL, NULL};
  char* bufs[3] = {s, r, rIn};
  for (int k = 0; perf_reg && k < 3; k++)
    if (ncclCommRegister(o.comm, bufs[k], span, &regs[k]) != ncclSuccess) {
      fprintf(stderr, "mkccl-perf: rank %d: ncclCommRegister failed: %s\n", o.rank, ncclGetLastError(o.comm));
      return 1;
    }
  if (o.rank == 0) {
    int v;
    ncclGetVersion(&v);
    printf("# mkccl-perf %s: %d ranks, %s%s, NCCL API %d, iters %d, warmup %d, check %d\n", coll_names[o.coll],
           o.nranks, PERF_MEM, perf_reg ? " registered" : "", v, o.iters, o.warmup, o.check);
    printf("# ncclCommInitRank: %.1f ms (rank 0)\n", initMs);
    printf("#\n#%79s%37s\n", "out-of-place", "in-place");
    printf("#%11s  %12s  %8s  %6s  %6s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  %6s\n", "size", "count", "type", "redop",
           "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
    printf("#%11s  %12s  %8s  %6s  %6s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  %6s\n", "(B)", "(elements)", "", "", "",
           "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  }
  /* As nccl-tests: warm up at the largest size, then the smallest, before
   * any size is timed (each size then has its own -w as well). The first
   * size timed after start-up alone can run at a fraction of its speed in
   * 4-rank host runs. */
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
    printf("# Out of bounds values : %ld %s\n", o.wrongSum, o.wrongSum ? "FAILED" : "OK");
    printf("# Avg bus bandwidth    : %g\n#\n", nSizes ? busSum / nSizes : 0);
    fflush(stdout);
  }
  /* A launcher stops the others when one rank exits non-zero: none leaves
   * before rank 0 has printed the table. */
  if (rc != 1) barrier(&o);
  for (int k = 2; k >= 0; k--)
    if (regs[k]) ncclCommDeregister(o.comm, regs[k]);
  perf_free_buf(o.comm, s, sWin);
  perf_free_buf(o.comm, r, rWin);
  perf_free_buf(o.comm, rIn, rInWin);
  ncclCommDestroy(o.comm);
  free(stage);
  free(rowIn);
  return rc;
}
