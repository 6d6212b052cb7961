#include "coll_cases.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static const char* cname[] = {"allreduce", "allgather", "reducescatter", "broadcast", "reduce",
                              "sendrecv", "alltoall", "gather", "scatter"};
static const int tsize[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
#define OP_PREMUL C_OP_PREMUL

const char* coll_name(int coll) { return cname[coll]; }
int coll_reduces(int coll) { return coll == C_ALLREDUCE || coll == C_REDUCESCATTER || coll == C_REDUCE; }
int coll_rooted(int coll) { return coll == C_BROADCAST || coll == C_REDUCE || coll == C_GATHER || coll == C_SCATTER; }

/* ---- element conversions (exact for the small values used) ---- */
static float h2f(uint16_t h) {
  uint32_t s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  float v = e ? ldexpf((float)(m | 1024), (int)e - 25) : ldexpf((float)m, -24);
  return s ? -v : v;
}
static uint16_t f2h(float f) {
  if (f == 0) return 0;
  int e;
  float m = frexpf(fabsf(f), &e);
  uint32_t mant = (uint32_t)lrintf(m * 2048.0f);
  if (mant == 2048) mant = 1024, e++;
  return (uint16_t)((f < 0 ? 0x8000 : 0) | ((uint32_t)(e + 14) << 10) | (mant & 1023));
}
static float fp8f(uint8_t v, int e5) {
  int mb = e5 ? 2 : 3, bias = e5 ? 15 : 7, e = (v >> mb) & (e5 ? 31 : 15), m = v & ((1 << mb) - 1);
  float r = e ? ldexpf((float)((1 << mb) | m), e - bias - mb) : ldexpf((float)m, 1 - bias - mb);
  return (v & 0x80) ? -r : r;
}
static uint8_t f2fp8(float f, int e5) { /* nearest, by search: exact enough for tests */
  uint8_t best = 0;
  for (int c = 0; c < 128; c++) {
    float v = fp8f((uint8_t)c, e5);
    if (isnan(v) || isinf(v)) continue;
    if (fabsf(v - fabsf(f)) < fabsf(fp8f(best, e5) - fabsf(f))) best = (uint8_t)c;
  }
  return (uint8_t)(best | (f < 0 ? 0x80 : 0));
}
static void put(int t, void* p, size_t i, double v) {
  switch (t) {
    case ncclInt8: ((int8_t*)p)[i] = (int8_t)v; break;
    case ncclUint8: ((uint8_t*)p)[i] = (uint8_t)v; break;
    case ncclInt32: ((int32_t*)p)[i] = (int32_t)v; break;
    case ncclUint32: ((uint32_t*)p)[i] = (uint32_t)v; break;
    case ncclInt64: ((int64_t*)p)[i] = (int64_t)v; break;
    case ncclUint64: ((uint64_t*)p)[i] = (uint64_t)v; break;
    case ncclFloat16: ((uint16_t*)p)[i] = f2h((float)v); break;
    case ncclFloat32: ((float*)p)[i] = (float)v; break;
    case ncclFloat64: ((double*)p)[i] = v; break;
    case ncclBfloat16: { float f = (float)v; uint32_t u; memcpy(&u, &f, 4); ((uint16_t*)p)[i] = (uint16_t)((u + 0x8000) >> 16); break; }
    case ncclFloat8e4m3: ((uint8_t*)p)[i] = f2fp8((float)v, 0); break;
    default: ((uint8_t*)p)[i] = f2fp8((float)v, 1); break;
  }
}
static double get(int t, const void* p, size_t i) {
  switch (t) {
    case ncclInt8: return ((const int8_t*)p)[i];
    case ncclUint8: return ((const uint8_t*)p)[i];
    case ncclInt32: return ((const int32_t*)p)[i];
    case ncclUint32: return ((const uint32_t*)p)[i];
    case ncclInt64: return (double)((const int64_t*)p)[i];
    case ncclUint64: return (double)((const uint64_t*)p)[i];
    case ncclFloat16: return h2f(((const uint16_t*)p)[i]);
    case ncclFloat32: return ((const float*)p)[i];
    case ncclFloat64: return ((const double*)p)[i];
    case ncclBfloat16: { uint32_t u = (uint32_t)((const uint16_t*)p)[i] << 16; float f; memcpy(&f, &u, 4); return f; }
    case ncclFloat8e4m3: return fp8f(((const uint8_t*)p)[i], 0);
    default: return fp8f(((const uint8_t*)p)[i], 1);
  }
}
static int is_float(int t) { return t >= ncclFloat16; }

/* Inputs: 0/1 (every sum of 8 is exact, even in fp8); for products a few
 * ranks hold 2, the rest 1 (product <= 8). */
static double in_value(int op, int rank, size_t i) {
  if (op == ncclProd) return (rank < 3 && (i + (size_t)rank) % 2) ? 2 : 1;
  return (double)((i + (size_t)rank) % 2);
}
static double reduce_expect(int op, int t, int n, size_t i) {
  double e = in_value(op, 0, i);
  for (int r = 1; r < n; r++) {
    double v = in_value(op, r, i);
    if (op == ncclProd) e *= v;
    else if (op == ncclMax) e = v > e ? v : e;
    else if (op == ncclMin) e = v < e ? v : e;
    else if (op == OP_PREMUL) e += 2 * v;
    else e += v;
  }
  if (op == OP_PREMUL) e += in_value(op, 0, i); /* rank 0's term was added once, not doubled */
  if (op == ncclAvg) e = is_float(t) ? e / n : floor(e / n);
  return e;
}
static double tolerance(int t, int op) {
  if (op != ncclAvg || !is_float(t)) return 0;
  return t == ncclFloat8e4m3 || t == ncclFloat8e5m2 ? 0.2 : t == ncclFloat16 || t == ncclBfloat16 ? 0.02 : 1e-5;
}


static void* host_alloc(size_t b) { return calloc(1, b ? b : 1); }
static void host_copy(void* d, const void* s, size_t b) { memcpy(d, s, b); }
static void host_sync(void* stream) { (void)stream; }
const coll_mem_t coll_mem_host = {host_alloc, free, host_copy, host_copy, host_sync};

void coll_case_prepare(coll_run_t* run, const coll_case_t* c, ncclComm_t comm, int rank, int n, const coll_mem_t* mem,
                       void* stream) {
  memset(run, 0, sizeof(*run));
  run->c = *c;
  run->comm = comm;
  run->rank = rank;
  run->n = n;
  run->mem = mem;
  run->stream = stream;
  size_t ts = (size_t)tsize[c->type], cnt = c->count, nn = (size_t)n;
  run->ts = ts;
  run->inCnt = run->outCnt = cnt;
  if (c->coll == C_ALLGATHER || c->coll == C_GATHER) run->outCnt = cnt * nn;
  if (c->coll == C_REDUCESCATTER || c->coll == C_SCATTER) run->inCnt = cnt * nn;
  if (c->coll == C_ALLTOALL) run->inCnt = run->outCnt = cnt * nn;
  /* One region: [send (inCnt)][gap][recv (outCnt)][gap]. In place, the
   * send block is (the rank's block of) the receive buffer; for sendrecv
   * and alltoall, whose API has no in-place form, the regions stay apart. */
  size_t bytes = (run->inCnt + run->outCnt + 16) * ts;
  run->host = calloc(1, bytes);
  run->dev = mem->alloc(bytes);
  CHECK(run->host && run->dev);
  size_t sOff = 0, rOff = (run->inCnt + 8) * ts;
  if (c->inPlace && c->coll != C_SENDRECV && c->coll != C_ALLTOALL) {
    rOff = 0;
    if (c->coll == C_ALLGATHER || c->coll == C_GATHER) sOff = (size_t)rank * cnt * ts;
    else if (c->coll == C_REDUCESCATTER || c->coll == C_SCATTER) rOff = (size_t)rank * cnt * ts;
  }
  for (size_t i = 0; i < run->inCnt; i++) put(c->type, run->host + sOff, i, in_value(c->op, rank, i));
  mem->to_dev(run->dev, run->host, bytes);
  run->s = run->dev + sOff;
  run->r = run->dev + rOff;
  run->rop = (ncclRedOp_t)c->op;
  if (c->op == OP_PREMUL) {
    unsigned char scalar[8];
    put(c->type, scalar, 0, 2.0);
    CHECK_NCCL(ncclRedOpCreatePreMulSum(&run->rop, scalar, (ncclDataType_t)c->type, ncclScalarHostImmediate, comm));
  }
}

ncclResult_t coll_case_launch(coll_run_t* run) {
  const coll_case_t* c = &run->c;
  ncclComm_t comm = run->comm;
  ncclDataType_t t = (ncclDataType_t)c->type;
  size_t cnt = c->count;
  void* s = run->s;
  void* r = run->r;
  int next = (run->rank + 1) % run->n, prev = (run->rank - 1 + run->n) % run->n;
  cudaStream_t st = (cudaStream_t)run->stream;
  switch (c->coll) {
    case C_ALLREDUCE: return ncclAllReduce(s, r, cnt, t, run->rop, comm, st);
    case C_ALLGATHER: return ncclAllGather(s, r, cnt, t, comm, st);
    case C_REDUCESCATTER: return ncclReduceScatter(s, r, cnt, t, run->rop, comm, st);
    case C_BROADCAST: return ncclBroadcast(s, r, cnt, t, c->root, comm, st);
    case C_REDUCE: return ncclReduce(s, r, cnt, t, run->rop, c->root, comm, st);
    case C_SENDRECV: {
      ncclResult_t res = ncclGroupStart();
      if (res == ncclSuccess) res = ncclSend(s, cnt, t, next, comm, st);
      if (res == ncclSuccess) res = ncclRecv(r, cnt, t, prev, comm, st);
      ncclResult_t end = ncclGroupEnd();
      return res != ncclSuccess ? res : end;
    }
    case C_ALLTOALL: return ncclAlltoAll(s, r, cnt, t, comm, st);
    case C_GATHER: return ncclGather(s, r, cnt, t, c->root, comm, st);
    default: return ncclScatter(s, r, cnt, t, c->root, comm, st);
  }
}

long coll_case_check(coll_run_t* run) {
  const coll_case_t* c = &run->c;
  run->mem->sync(run->stream);
  size_t ts = run->ts, cnt = c->count;
  char* out = run->host + (size_t)(run->r - run->dev);
  run->mem->to_host(out, run->r, run->outCnt * ts);
  if (c->op == OP_PREMUL) CHECK_NCCL(ncclRedOpDestroy(run->rop, run->comm));
  int rank = run->rank, n = run->n, op = c->op, prev = (rank - 1 + n) % n;
  long wrong = 0;
  double tol = tolerance(c->type, op);
  for (size_t i = 0; i < run->outCnt; i++) {
    double e;
    switch (c->coll) {
      case C_ALLREDUCE: e = reduce_expect(op, c->type, n, i); break;
      case C_REDUCE: if (rank != c->root) { i = run->outCnt; continue; } e = reduce_expect(op, c->type, n, i); break;
      case C_REDUCESCATTER: e = reduce_expect(op, c->type, n, (size_t)rank * cnt + i); break;
      case C_ALLGATHER: e = in_value(op, (int)(i / cnt), i % cnt); break;
      case C_GATHER: if (rank != c->root) { i = run->outCnt; continue; } e = in_value(op, (int)(i / cnt), i % cnt); break;
      case C_BROADCAST: e = in_value(op, c->root, i); break;
      case C_SENDRECV: e = in_value(op, prev, i); break;
      case C_ALLTOALL: e = in_value(op, (int)(i / cnt), (size_t)rank * cnt + i % cnt); break;
      default: e = in_value(op, c->root, (size_t)rank * cnt + i); break;
    }
    double got = get(c->type, out, i);
    if (fabs(got - e) > tol * (fabs(e) + 1)) {
      if (wrong < 3)
        fprintf(stderr, "rank %d: %s type %d op %d count %zu root %d inplace %d: [%zu] = %g, expected %g\n", rank,
                cname[c->coll], c->type, op, cnt, c->root, c->inPlace, i, got, e);
      wrong++;
    }
  }
  run->mem->release(run->dev);
  free(run->host);
  return wrong;
}

long coll_matrix_run(ncclComm_t comm, int rank, int n, int quick, const coll_mem_t* mem, void* stream) {
  long wrong = 0;
  const size_t counts[] = {0, 1, 7, (size_t)(quick ? 100003 : 1000003)};
  int trace = getenv("TEST_COLL_TRACE") != NULL;
  for (int coll = 0; coll < C_N; coll++)
    for (int type = 0; type < ncclNumTypes; type++)
      for (int op = 0; op < (coll_reduces(coll) ? 6 : 1); op++)
        for (int k = 0; k < 4; k++) {
          /* The big count once per collective and op family, every type on small ones. */
          if (k == 3 && type != ncclFloat32 && type != ncclInt8 && !(type == ncclBfloat16 && op == 0)) continue;
          if (quick && k == 3 && type != ncclFloat32) continue;
          for (int root = 0; root < (coll_rooted(coll) ? 2 : 1); root++) {
            coll_case_t c = {coll, type, op, root ? n - 1 : 0, (int)((k + type + op) % 2), counts[k]};
            coll_run_t run;
            coll_case_prepare(&run, &c, comm, rank, n, mem, stream);
            if (trace) /* which case a hang or a crash happened in */
              fprintf(stderr, "rank %d case %s type %d op %d count %zu root %d inplace %d\n", rank, cname[coll], type,
                      op, counts[k], c.root, c.inPlace);
            CHECK_NCCL(coll_case_launch(&run));
            wrong += coll_case_check(&run);
          }
        }
  return wrong;
}
