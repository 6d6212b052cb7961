/* Symmetric kernels on GPUs (needs GPUs; skipped without):
 *
 *   test_gpu_symm symm N [quick]  N rank processes (rank r on GPU r % ndev;
 *                                 MKCCL_ALLOW_SAME_GPU=1 for one GPU), buffers
 *                                 from ncclMemAlloc in two windows registered
 *                                 with NCCL_WIN_COLL_SYMMETRIC
 *   test_gpu_symm ring N [quick]  the same calls with MKCCL_SYMM_MAX_BYTES=0:
 *                                 the same buffers through the ring kernels
 *
 * AllReduce, ReduceScatter (Sum, Prod, Max, Min, Avg) and AllGather of
 * float, half, bfloat16, double, int32 and int64, in place and out of
 * place, buffers at a 16-byte and at an element-aligned offset in their
 * windows, counts from 1 to past the two-shot limit and (AllGather and
 * ReduceScatter of wide types) past MKCCL_SYMM_MAX_BYTES, where the ring
 * runs. Every element of every rank is checked, and the bytes around the
 * output stay untouched. Inputs are small integers of rank, element and
 * call (AllGather: bytes of them), so every result is exact in every type
 * and a wrong peer, element or stale call changes it. Each rank reads its
 * own NCCL_DEBUG_FILE (TUNING) and counts the collectives that ran
 * symmetric: exactly those of at most MKCCL_SYMM_MAX_BYTES (none in ring
 * mode). */
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
#include "ranks_id.h"

#define WIN_BYTES (8u << 20)
#define GUARD 64
#define SENTINEL 0xee
#define SYMM_MAX_BYTES (1u << 20)

static int quick, ringMode, ndev;

typedef struct {
  ncclDataType_t type;
  int size;
  const char* name;
} type_t;

static const type_t types[] = {{ncclFloat32, 4, "float"}, {ncclFloat16, 2, "half"}, {ncclBfloat16, 2, "bfloat16"},
                               {ncclFloat64, 8, "double"}, {ncclInt32, 4, "int32"},  {ncclInt64, 8, "int64"}};
static const ncclRedOp_t ops[] = {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg};
static const char* const opNames[] = {"sum", "prod", "max", "min", "avg"};

/* Element i of rank r's input in call c: 1..13 (Prod: 1 or 2, so that a
 * product of 4 stays exact in bfloat16). */
static double in_value(ncclRedOp_t op, int r, int64_t i, int c) {
  if (op == ncclProd) return 1 + ((r + i + c) & 1);
  return 1 + (double)((r * 7 + i * 3 + c * 5) % 13);
}

static int is_float(ncclDataType_t t) {
  return t == ncclFloat32 || t == ncclFloat16 || t == ncclBfloat16 || t == ncclFloat64;
}

static double expect_value(ncclRedOp_t op, ncclDataType_t t, int n, int64_t i, int c) {
  double acc = in_value(op, 0, i, c);
  for (int r = 1; r < n; r++) {
    double v = in_value(op, r, i, c);
    acc = op == ncclProd ? acc * v : op == ncclMax ? (v > acc ? v : acc) : op == ncclMin ? (v < acc ? v : acc) : acc + v;
  }
  if (op == ncclAvg) acc = is_float(t) ? acc / n : (double)((int64_t)acc / n);
  return acc;
}

/* Exact values only (small integers and their quarters): no rounding. */
static uint16_t to_half(float f) {
  if (f == 0) return 0;
  uint32_t b;
  memcpy(&b, &f, 4);
  uint32_t e = ((b >> 23) & 0xff) - 127 + 15, m = (b >> 13) & 0x3ff;
  return (uint16_t)((b >> 16 & 0x8000) | e << 10 | m);
}

static void store(ncclDataType_t t, void* p, double v) {
  switch (t) {
    case ncclFloat32: { float f = (float)v; memcpy(p, &f, 4); break; }
    case ncclFloat64: memcpy(p, &v, 8); break;
    case ncclFloat16: { uint16_t h = to_half((float)v); memcpy(p, &h, 2); break; }
    case ncclBfloat16: { float f = (float)v; uint32_t b; memcpy(&b, &f, 4); uint16_t h = (uint16_t)(b >> 16); memcpy(p, &h, 2); break; }
    case ncclInt32: { int32_t x = (int32_t)v; memcpy(p, &x, 4); break; }
    default: { int64_t x = (int64_t)v; memcpy(p, &x, 8); break; }
  }
}

/* AllGather's byte b of rank r's input in call c. */
static uint8_t in_byte(int r, int64_t b, int c) { return (uint8_t)(r * 37 + b * 11 + c * 101 + 1); }

typedef struct {
  int rank, n;
  ncclComm_t comm;
  cudaStream_t stream;
  char* win[2];   /* device: the two windows */
  uint8_t* host;  /* a window's image */
  uint8_t* back;
  int call;
  int symmExpected;
  long wrong;
} ctx_t;

static void dev_put(ctx_t* x, char* dst, const void* src, size_t b) {
  (void)x;
  CUDA_CHECK(cudaMemcpy(dst, src, b, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaDeviceSynchronize());
}
static void dev_get(ctx_t* x, void* dst, const char* src, size_t b) {
  (void)x;
  CUDA_CHECK(cudaMemcpy(dst, src, b, cudaMemcpyDeviceToHost));
}

/* Bytes [lo, hi) of window w as `want`; counts and reports mismatches. */
static void check_bytes(ctx_t* x, const char* what, int w, size_t lo, size_t hi, const uint8_t* want, size_t ts) {
  dev_get(x, x->back, x->win[w] + lo, hi - lo);
  long bad = 0;
  for (size_t b = 0; b < hi - lo; b++)
    if (x->back[b] != want[b]) {
      if (bad++ < 4)
        fprintf(stderr, "rank %d %s: window %d byte %zu (element %zu): got 0x%02x, expected 0x%02x\n", x->rank, what, w,
                lo + b, (lo + b) / ts, x->back[b], want[b]);
    }
  x->wrong += bad;
}

enum { COLL_AR, COLL_RS, COLL_AG };
static const char* const collNames[] = {"allreduce", "reducescatter", "allgather"};

/* One call: coll of `count` of type t (op for the reducing ones) with the
 * buffers at byte `off` of the windows, in place or not; checked. */
static void run_case(ctx_t* x, int coll, const type_t* t, int opIx, size_t count, size_t off, int inPlace) {
  int n = x->n, r = x->rank, c = x->call++;
  ncclRedOp_t op = ops[opIx];
  size_t ts = (size_t)t->size, part = count * ts, all = part * (size_t)n;
  size_t sendBytes = coll == COLL_RS ? all : part, recvBytes = coll == COLL_AG ? all : part;
  size_t span = sendBytes > recvBytes ? sendBytes : recvBytes;
  size_t lo = off - GUARD, hi = off + span + GUARD;
  CHECK(hi <= WIN_BYTES);
  size_t nBytes = coll == COLL_AR ? part : all;
  if (!ringMode && nBytes <= SYMM_MAX_BYTES) x->symmExpected++;
  /* Both windows' images: sentinel, then the input where it goes. */
  int sw = 0, rw = inPlace ? 0 : 1;
  size_t sendOff = off, recvOff = off;
  if (inPlace && coll == COLL_AG) sendOff = off + (size_t)r * part;
  if (inPlace && coll == COLL_RS) recvOff = off + (size_t)r * part;
  uint8_t* img = x->host;
  memset(img, SENTINEL, hi - lo);
  uint8_t* in = img + (sendOff - lo);
  if (coll == COLL_AG)
    for (size_t b = 0; b < part; b++) in[b] = in_byte(r, (int64_t)b, c);
  else
    for (size_t i = 0; i < sendBytes / ts; i++) store(t->type, in + i * ts, in_value(op, r, (int64_t)i, c));
  dev_put(x, x->win[sw] + lo, img, hi - lo);
  if (!inPlace) {
    memset(x->back, SENTINEL, hi - lo);
    dev_put(x, x->win[rw] + lo, x->back, hi - lo);
  }
  const char* sb = x->win[sw] + sendOff;
  char* rb = x->win[rw] + recvOff;
  if (coll == COLL_AR)
    CHECK_NCCL(ncclAllReduce(sb, rb, count, t->type, op, x->comm, x->stream));
  else if (coll == COLL_RS)
    CHECK_NCCL(ncclReduceScatter(sb, rb, count, t->type, op, x->comm, x->stream));
  else
    CHECK_NCCL(ncclAllGather(sb, rb, count, t->type, x->comm, x->stream));
  CUDA_CHECK(cudaStreamSynchronize(x->stream));
  /* What the output window must hold now: out of place, sentinel around
   * the output; in place, the input image with the output written over it. */
  uint8_t* want = img;
  if (!inPlace) memset(want, SENTINEL, hi - lo);
  uint8_t* out = want + (recvOff - lo);
  if (coll == COLL_AG) {
    for (int q = 0; q < n; q++)
      for (size_t b = 0; b < part; b++) out[(size_t)q * part + b] = in_byte(q, (int64_t)b, c);
  } else {
    int64_t first = coll == COLL_RS ? (int64_t)r * (int64_t)count : 0;
    for (size_t i = 0; i < count; i++) store(t->type, out + i * ts, expect_value(op, t->type, n, first + (int64_t)i, c));
  }
  char what[160];
  snprintf(what, sizeof(what), "%s %s %s count %zu offset %zu %s (call %d)", collNames[coll], t->name,
           coll == COLL_AG ? "-" : opNames[opIx], count, off, inPlace ? "in place" : "out of place", c);
  long before = x->wrong;
  if (inPlace && coll == COLL_RS) {
    /* The other blocks of an in-place ReduceScatter's input are not the output: only ours and the guards. */
    check_bytes(x, what, rw, lo, off, want, ts);
    check_bytes(x, what, rw, recvOff, recvOff + part, out, ts);
    check_bytes(x, what, rw, off + all, hi, want + (off + all - lo), ts);
  } else {
    check_bytes(x, what, rw, lo, hi, want, ts);
  }
  if (!inPlace) { /* the input untouched */
    memset(img, SENTINEL, hi - lo);
    if (coll == COLL_AG)
      for (size_t b = 0; b < part; b++) in[b] = in_byte(r, (int64_t)b, c);
    else
      for (size_t i = 0; i < sendBytes / ts; i++) store(t->type, in + i * ts, in_value(op, r, (int64_t)i, c));
    check_bytes(x, what, sw, lo, hi, img, ts);
  }
  if (x->wrong != before) fprintf(stderr, "rank %d: FAILED %s: %ld wrong bytes\n", r, what, x->wrong - before);
}

/* Collectives this process's log says ran symmetric. */
static int symm_lines(void) {
  char path[256];
  snprintf(path, sizeof(path), "%s.%d.log", getenv("TEST_SYMM_LOG"), (int)getpid());
  FILE* f = fopen(path, "r");
  CHECK_MSG(f != NULL, "cannot read %s", path);
  char line[1024];
  int n = 0;
  while (fgets(line, sizeof(line), f)) n += strstr(line, "-> Algo symmetric") != NULL;
  fclose(f);
  return n;
}

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  ctx_t x;
  memset(&x, 0, sizeof(x));
  x.rank = rank;
  x.n = n;
  ncclUniqueId id;
  ranks_unique_id(rank, &id);
  CUDA_CHECK(cudaSetDevice(rank % ndev));
  CUDA_CHECK(cudaStreamCreateWithFlags(&x.stream, cudaStreamNonBlocking));
  CHECK_NCCL(ncclCommInitRank(&x.comm, n, id, rank));
  ncclWindow_t w[2];
  for (int i = 0; i < 2; i++) {
    CHECK_NCCL(ncclMemAlloc((void**)&x.win[i], WIN_BYTES));
    CHECK_NCCL(ncclCommWindowRegister(x.comm, x.win[i], WIN_BYTES, &w[i], NCCL_WIN_COLL_SYMMETRIC));
  }
  x.host = malloc(WIN_BYTES);
  x.back = malloc(WIN_BYTES);
  CHECK(x.host && x.back);
  const size_t counts[] = {1, 7, 1000, 8195, 70001};
  size_t nCounts = quick ? 4 : sizeof(counts) / sizeof(counts[0]);
  for (size_t ti = 0; ti < sizeof(types) / sizeof(types[0]); ti++) {
    const type_t* t = &types[ti];
    size_t offs[2] = {256, 256 + (size_t)t->size};
    for (size_t ci = 0; ci < nCounts; ci++)
      for (int o = 0; o < 2; o++)
        for (int inPlace = 0; inPlace < 2; inPlace++) {
          for (int opIx = 0; opIx < 5; opIx++) {
            if (quick && opIx != 0 && opIx != 4 && ci != 2) continue;
            run_case(&x, COLL_AR, t, opIx, counts[ci], offs[o], inPlace);
            run_case(&x, COLL_RS, t, opIx, counts[ci], offs[o], inPlace);
          }
          run_case(&x, COLL_AG, t, 0, counts[ci], offs[o], inPlace);
        }
  }
  for (int i = 0; i < 2; i++) {
    CHECK_NCCL(ncclCommWindowDeregister(x.comm, w[i]));
    CHECK_NCCL(ncclMemFree(x.win[i]));
  }
  CHECK_NCCL(ncclCommDestroy(x.comm));
  int ran = symm_lines();
  fprintf(stderr, "rank %d: %d calls, %ld wrong bytes, %d ran symmetric (expected %d)\n", rank, x.call, x.wrong, ran,
          x.symmExpected);
  CHECK_MSG(x.wrong == 0, "rank %d: %ld wrong bytes", rank, x.wrong);
  CHECK_MSG(ran == x.symmExpected, "rank %d: %d collectives ran symmetric, expected %d", rank, ran, x.symmExpected);
  free(x.host);
  free(x.back);
  return 0;
}

int main(int argc, char** argv) {
  gpu_crash_handlers("test_gpu_symm");
  if (argc < 3 || (strcmp(argv[1], "symm") && strcmp(argv[1], "ring"))) {
    fprintf(stderr, "usage: test_gpu_symm symm|ring N [quick]\n");
    return 2;
  }
  ringMode = !strcmp(argv[1], "ring");
  int n = atoi(argv[2]);
  quick = argc > 3 && !strcmp(argv[3], "quick");
  ndev = gpu_count_for_ranks("test_gpu_symm", n);
  /* Set before any rank touches the library (the parent never does): each
   * rank process logs its tuning choices to a file of its own. */
  char log[128];
  snprintf(log, sizeof(log), "/tmp/test_gpu_symm.%d", (int)getpid());
  char file[160];
  snprintf(file, sizeof(file), "%s.%%p.log", log);
  setenv("TEST_SYMM_LOG", log, 1);
  setenv("NCCL_DEBUG", "INFO", 1);
  setenv("NCCL_DEBUG_SUBSYS", "TUNING", 1);
  setenv("NCCL_DEBUG_FILE", file, 1);
  setenv("MKCCL_SYMM_MAX_BYTES", ringMode ? "0" : "1048576", 1);
  alarm(1100); /* a hang becomes a failure */
  CHECK_EQ_INT(ranks_run(n, rank_main, NULL, 1080), 0);
  return 0;
}
