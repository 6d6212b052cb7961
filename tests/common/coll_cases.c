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
static float fp8_decode(uint8_t v, int e5) {
  int mb = e5 ? 2 : 3, bias = e5 ? 15 : 7, e = (v >> mb) & (e5 ? 31 : 15), m = v & ((1 << mb) - 1);
  if (e5 ? e == 31 : (v & 0x7f) == 0x7f) return e5 && m == 0 ? ((v & 0x80) ? -INFINITY : INFINITY) : NAN;
  float r = e ? ldexpf((float)((1 << mb) | m), e - bias - mb) : ldexpf((float)m, 1 - bias - mb);
  return (v & 0x80) ? -r : r;
}
/* Every fp8 value, made once: conversions are lookups. */
static float fp8_values[2][256];
static float fp8f(uint8_t v, int e5) {
  if (fp8_values[1][1] == 0)
    for (int k = 0; k < 2; k++)
      for (int c = 0; c < 256; c++) fp8_values[k][c] = fp8_decode((uint8_t)c, k);
  return fp8_values[e5][v];
}
static uint8_t f2fp8(float f, int e5) { /* nearest finite (ties to the smaller): positive codes grow with their value */
  float a = fabsf(f);
  int lo = 0, hi = e5 ? 0x7b : 0x7e; /* the largest finite codes */
  if (a >= fp8f((uint8_t)hi, e5)) lo = hi;
  while (lo < hi) { /* the first code whose value is >= a */
    int mid = (lo + hi) / 2;
    if (fp8f((uint8_t)mid, e5) < a) lo = mid + 1;
    else hi = mid;
  }
  if (lo > 0 && a - fp8f((uint8_t)(lo - 1), e5) <= fp8f((uint8_t)lo, e5) - a) lo--;
  return (uint8_t)(lo | (f < 0 ? 0x80 : 0));
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

static int is_unsigned(int t) { return t == ncclUint8 || t == ncclUint32 || t == ncclUint64; }

/* ---- inputs ---- */
static uint64_t mix64(uint64_t x) { /* splitmix64: a bijection, so distinct inputs hash apart */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
/* 16 bits of a hash of (seed, rank, element) (rank -1: of the element
 * alone): one 64-bit hash serves 4 neighbouring elements. */
static _Thread_local uint64_t hash_key, hash_val; /* the last one: elements go in order */
static _Thread_local int hash_valid;
static inline uint64_t elem_hash(uint64_t seed, int rank, size_t i) {
  uint64_t key = seed ^ (uint64_t)(i >> 2) ^ ((uint64_t)(uint8_t)(rank + 1) << 56);
  if (key != hash_key || !hash_valid) hash_key = key, hash_val = mix64(key), hash_valid = 1;
  return (hash_val >> (16 * (i & 3))) & 0xffff;
}
/* A value in [0, m], from the high half of a hash. */
static uint64_t pick(uint64_t h, uint64_t m) { return (uint64_t)(((unsigned __int128)(h >> 32) * (m + 1)) >> 32); }

/* Raw elements, little-endian as on x86 and GPUs. */
static uint64_t type_mask(int t) { return tsize[t] == 8 ? ~0ull : (1ull << (8 * tsize[t])) - 1; }
static inline uint64_t bits_get(int t, const void* p, size_t i) {
  switch (tsize[t]) {
    case 1: return ((const uint8_t*)p)[i];
    case 2: return ((const uint16_t*)p)[i];
    case 4: return ((const uint32_t*)p)[i];
    default: return ((const uint64_t*)p)[i];
  }
}
static inline void bits_put(int t, void* p, size_t i, uint64_t b) {
  switch (tsize[t]) {
    case 1: ((uint8_t*)p)[i] = (uint8_t)b; break;
    case 2: ((uint16_t*)p)[i] = (uint16_t)b; break;
    case 4: ((uint32_t*)p)[i] = (uint32_t)b; break;
    default: ((uint64_t*)p)[i] = b; break;
  }
}

/* The top bit of a float type's exponent: with it clear, a value is finite. */
static uint64_t float_top_exp(int t) {
  switch (t) {
    case ncclFloat16: case ncclBfloat16: return 1u << 14;
    case ncclFloat32: return 1u << 30;
    case ncclFloat64: return 1ull << 62;
    case ncclFloat8e4m3: case ncclFloat8e5m2: return 1u << 6;
    default: return 0;
  }
}

/* Data movements: the sender's rank in the low 4 bits, a hash of the case,
 * the rank and the element above, so a block from the wrong rank or a
 * shifted chunk differs in every type, even int8's. */
static inline uint64_t move_bits(const coll_run_t* run, int rank, size_t i) {
  return ((elem_hash(run->seed, rank, i) * 0x9e3779b97f4a7c15ull) << 4 | (uint64_t)(rank & 15)) & run->moveMask;
}

/* What the receive buffer and the guards start as, a value no correct
 * result has: NaN for floats; for integers all ones (moved data: rank 15
 * in the low bits, no sender below 16 ranks; reduced unsigned: above every
 * result) or, reduced signed, the type's minimum (below every result). */
static uint64_t poison_bits(int t, int moves) {
  switch (t) {
    case ncclFloat16: return 0x7e00;
    case ncclBfloat16: return 0x7fc0;
    case ncclFloat32: return 0x7fc00000;
    case ncclFloat64: return 0x7ff8000000000000ull;
    case ncclFloat8e4m3: case ncclFloat8e5m2: return 0x7f;
    case ncclInt8: case ncclInt32: case ncclInt64:
      if (!moves) return 1ull << (8 * tsize[t] - 1);
      return type_mask(t);
    default: return type_mask(t);
  }
}

/* Reductions: every partial sum stays within the type's contiguous
 * integers (fp8 e5m2: 8, e4m3: 16), so any order of additions is exact. */
static double sum_bound(int t) {
  switch (t) {
    case ncclInt8: return 127;
    case ncclUint8: return 254;
    case ncclInt32: case ncclUint32: return 1 << 30;
    case ncclFloat16: return 2048;
    case ncclFloat32: return 1 << 24;
    case ncclBfloat16: return 256;
    case ncclFloat8e4m3: return 16;
    case ncclFloat8e5m2: return 8;
    default: return 1099511627776.0; /* 2^40: 64-bit types, exact in the double reference too */
  }
}
/* Max/Min inputs' magnitude: the result is one of the inputs, so any value
 * of the type is exact; within the type's finite range. */
static double minmax_bound(int t) {
  switch (t) {
    case ncclInt8: return 100;
    case ncclUint8: return 200;
    case ncclFloat8e4m3: return 400;
    case ncclFloat8e5m2: return 50000;
    case ncclFloat16: return 60000;
    default: return 1 << 20;
  }
}
/* PreMulSum scalars: powers of two keep float sums exact. */
static double premul_scalar(int op, int t) { return op == C_OP_PREMUL ? 2 : is_float(t) ? 0.5 : 3; }
static int is_premul(int op) { return op == C_OP_PREMUL || op == C_OP_PREMUL_DEV; }
static double quantize(int t, double v) {
  unsigned char b[8];
  put(t, b, 0, v);
  return get(t, b, 0);
}
/* Half an ulp, relative: the rounding of one float operation. */
static double unit_roundoff(int t) {
  switch (t) {
    case ncclFloat16: return ldexp(1, -11);
    case ncclFloat32: return ldexp(1, -24);
    case ncclFloat64: return ldexp(1, -53);
    case ncclBfloat16: return ldexp(1, -8);
    case ncclFloat8e4m3: return ldexp(1, -4);
    default: return ldexp(1, -3);
  }
}

/* Reductions draw each element's inputs from one of RED_ROWS rows of n
 * values, made per case: the element's hash picks the row and a rotation,
 * rank r takes value (r + rotation) % n of it. Every rank's inputs differ
 * from every other's (the rotation), the result differs element to element
 * (the row), and a row's reduction is known once: checking an element costs
 * one hash, not one per rank. */
#define RED_ROWS 64

static double red_draw(const coll_run_t* run, int row, int k, int* twos) {
  int t = run->c.type, op = run->c.op, n = run->n, sgn = !is_unsigned(t);
  uint64_t h = mix64(run->seed ^ ((uint64_t)(row * 64 + k) << 40));
  if (op == ncclProd) { /* +-1 and +-2, at most 6 twos in a row (int8 holds 64) */
    double v = (h & 2) && *twos < 6 ? 2 : 1;
    *twos += v == 2;
    return sgn && (h & 1) ? -v : v;
  }
  if (op == ncclMax || op == ncclMin) {
    uint64_t w = (uint64_t)minmax_bound(t);
    return quantize(t, sgn ? (double)pick(h, 2 * w) - (double)w : (double)pick(h, w));
  }
  /* Sum, Avg, PreMulSum: n inputs of at most m; an integer scalar scales the bound too. */
  double s = is_premul(op) && !is_float(t) ? premul_scalar(op, t) : 1;
  uint64_t m = (uint64_t)(sum_bound(t) / (n * s));
  return sgn ? (double)pick(h, 2 * m) - (double)m : (double)pick(h, m);
}

typedef struct {
  double expect[RED_ROWS], tol[RED_ROWS]; /* each row's reduction, the rounding allowed there */
  uint64_t expectBits[RED_ROWS];
  int exact;                              /* every tol is 0: results compare as bits */
  uint64_t in[];                          /* RED_ROWS x n inputs, as bits of the type */
} red_table_t;

/* The rows and their reductions (tol 0 but for float Avg over a rank count
 * that is not a power of two). */
static void red_table(coll_run_t* run) {
  int op = run->c.op, t = run->c.type, n = run->n;
  red_table_t* tab = malloc(sizeof(*tab) + sizeof(uint64_t) * RED_ROWS * (size_t)n);
  CHECK(tab);
  double s = is_premul(op) ? premul_scalar(op, t) : 1;
  tab->exact = 1;
  for (int j = 0; j < RED_ROWS; j++) {
    int twos = 0;
    double e = 0, mag = 0;
    for (int k = 0; k < n; k++) {
      double v = red_draw(run, j, k, &twos);
      unsigned char b[8] = {0};
      put(t, b, 0, v);
      tab->in[j * n + k] = bits_get(t, b, 0);
      mag += fabs(v);
      if (k == 0) e = s * v;
      else if (op == ncclProd) e *= v;
      else if (op == ncclMax) e = v > e ? v : e;
      else if (op == ncclMin) e = v < e ? v : e;
      else e += s * v;
    }
    tab->tol[j] = 0;
    if (op == ncclAvg && !is_float(t)) e = trunc(e / n);
    else if (op == ncclAvg) {
      e /= n;
      if (n & (n - 1)) tab->tol[j] = (n + 2) * unit_roundoff(t) * mag / n;
    }
    tab->exact &= tab->tol[j] == 0;
    tab->expect[j] = e;
    unsigned char b[8] = {0};
    put(t, b, 0, e);
    tab->expectBits[j] = bits_get(t, b, 0);
    /* The inputs were chosen so: exact results are values of the type (no
     * -0 either: zeros come only from sums, which give +0). */
    CHECK_MSG(tab->tol[j] > 0 || get(t, b, 0) == e, "type %d op %d: %g is not exact", t, op, e);
  }
  run->table = tab;
}

static int red_row(const coll_run_t* run, size_t i, int* rot) {
  uint64_t h = elem_hash(run->seed, -1, i);
  *rot = (int)(((h >> 6) * (uint64_t)run->n) >> 10);
  return (int)(h & (RED_ROWS - 1));
}
static inline uint64_t red_in_bits(const coll_run_t* run, int rank, size_t i) {
  int rot, j = red_row(run, i, &rot), k = rank + rot;
  return ((const red_table_t*)run->table)->in[j * run->n + (k >= run->n ? k - run->n : k)];
}

static void* host_alloc(size_t b) { return malloc(b ? b : 1); }
static void host_copy(void* d, const void* s, size_t b) { memcpy(d, s, b); }
static void host_sync(void* stream) { (void)stream; }
const coll_mem_t coll_mem_host = {host_alloc, free, host_copy, host_copy, host_sync, 1};

/* This rank's input i, as bits of the type. */
static inline uint64_t input_bits(const coll_run_t* run, size_t i) {
  return coll_reduces(run->c.coll) ? red_in_bits(run, run->rank, i) : move_bits(run, run->rank, i);
}

/* Elements [from, to) of p set to v, or the first of them that is not v. */
#define CONST_LOOP(T, body)                          \
  do {                                               \
    T* q = (T*)p;                                    \
    T x = (T)v;                                      \
    for (size_t e = from; e < to; e++) body;         \
  } while (0)
#define CONST_SWITCH(ts, body)                                    \
  switch (ts) {                                                   \
    case 1: CONST_LOOP(uint8_t, body); break;                     \
    case 2: CONST_LOOP(uint16_t, body); break;                    \
    case 4: CONST_LOOP(uint32_t, body); break;                    \
    default: CONST_LOOP(uint64_t, body); break;                   \
  }
static void const_fill(void* p, size_t ts, size_t from, size_t to, uint64_t v) { CONST_SWITCH(ts, q[e] = x) }
static size_t const_differs(const void* p, size_t ts, size_t from, size_t to, uint64_t v) {
  CONST_SWITCH(ts, if (q[e] != x) return e)
  return to;
}

void coll_case_prepare(coll_run_t* run, const coll_case_t* c, ncclComm_t comm, int rank, int n, const coll_mem_t* mem,
                       void* stream) {
  memset(run, 0, sizeof(*run));
  run->c = *c;
  run->comm = comm;
  run->rank = rank;
  run->n = n;
  run->mem = mem;
  run->stream = stream;
  int t = c->type, moves = !coll_reduces(c->coll);
  size_t ts = (size_t)tsize[t], cnt = c->count, nn = (size_t)n;
  run->ts = ts;
  run->seed = mix64(((uint64_t)c->coll << 56) ^ ((uint64_t)t << 48) ^ ((uint64_t)c->op << 40) ^
                    ((uint64_t)(c->root & 0xff) << 32) ^ ((uint64_t)(c->inPlace & 1) << 31) ^ (uint32_t)c->iter) ^
              mix64(cnt);
  run->inCnt = run->outCnt = cnt;
  if (c->coll == C_ALLGATHER || c->coll == C_GATHER) run->outCnt = cnt * nn;
  if (c->coll == C_REDUCESCATTER || c->coll == C_SCATTER) run->inCnt = cnt * nn;
  if (c->coll == C_ALLTOALL) run->inCnt = run->outCnt = cnt * nn;
  /* One region: [send (inCnt)][guard][recv (outCnt)][guard]. In place, the
   * send block is (the rank's block of) the receive buffer; for sendrecv
   * and alltoall, whose API has no in-place form, the regions stay apart. */
  size_t elems = run->inCnt + run->outCnt + 16;
  run->bytes = elems * ts;
  run->dev = mem->alloc(run->bytes);
  run->host = mem->direct ? run->dev : malloc(run->bytes);
  CHECK(run->host && run->dev);
  size_t sOff = 0, rOff = (run->inCnt + 8) * ts;
  if (c->inPlace && c->coll != C_SENDRECV && c->coll != C_ALLTOALL) {
    rOff = 0;
    if (c->coll == C_ALLGATHER || c->coll == C_GATHER) sOff = (size_t)rank * cnt * ts;
    else if (c->coll == C_REDUCESCATTER || c->coll == C_SCATTER) rOff = (size_t)rank * cnt * ts;
  }
  if (!moves) red_table(run);
  /* Poison all but the send buffer, which holds this rank's input. */
  size_t sBase = sOff / ts;
  run->sBase = sBase;
  run->poison = poison_bits(t, moves);
  run->moveMask = type_mask(t) & ~float_top_exp(t);
  const_fill(run->host, ts, 0, sBase, run->poison);
  const_fill(run->host, ts, sBase + run->inCnt, elems, run->poison);
  for (size_t i = 0; i < run->inCnt; i++) bits_put(t, run->host + sOff, i, input_bits(run, i));
  run->sent = malloc(run->inCnt * ts + 1); /* what must stay where it is not the result */
  CHECK(run->sent);
  memcpy(run->sent, run->host + sOff, run->inCnt * ts);
  if (!mem->direct) mem->to_dev(run->dev, run->host, run->bytes);
  run->s = run->dev + sOff;
  run->r = run->dev + rOff;
  run->rop = (ncclRedOp_t)c->op;
  unsigned char scalar[8] = {0};
  if (c->op == C_OP_PREMUL) {
    /* Read at creation: what the buffer holds afterwards (until the check)
     * must not count. */
    put(t, run->hostScalar, 0, premul_scalar(c->op, t));
    CHECK_NCCL(ncclRedOpCreatePreMulSum(&run->rop, run->hostScalar, (ncclDataType_t)t, ncclScalarHostImmediate, comm));
    put(t, run->hostScalar, 0, 5);
  } else if (c->op == C_OP_PREMUL_DEV) {
    /* Read when the collective runs: the value written after creation counts. */
    run->scalar = mem->alloc(ts);
    CHECK(run->scalar);
    put(t, scalar, 0, 5);
    mem->to_dev(run->scalar, scalar, ts);
    CHECK_NCCL(ncclRedOpCreatePreMulSum(&run->rop, run->scalar, (ncclDataType_t)t, ncclScalarDevice, comm));
    put(t, scalar, 0, premul_scalar(c->op, t));
    mem->to_dev(run->scalar, scalar, ts);
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

int coll_case_exact(const coll_run_t* run) {
  return !coll_reduces(run->c.coll) || ((const red_table_t*)run->table)->exact;
}

/* The bits or the value element i of this rank's result must hold. */
static uint64_t move_expect(const coll_run_t* run, size_t i) {
  const coll_case_t* c = &run->c;
  size_t cnt = c->count;
  int rank = run->rank, n = run->n;
  switch (c->coll) {
    case C_ALLGATHER: case C_GATHER: return move_bits(run, (int)(i / cnt), i % cnt);
    case C_BROADCAST: return move_bits(run, c->root, i);
    case C_SENDRECV: return move_bits(run, (rank - 1 + n) % n, i);
    case C_ALLTOALL: return move_bits(run, (int)(i / cnt), (size_t)rank * cnt + i % cnt);
    default: return move_bits(run, c->root, (size_t)rank * cnt + i); /* scatter */
  }
}

/* The first few wrong elements of a case, as bits (moved data, changed
 * memory) or values (reductions). */
static void report(const coll_run_t* run, long wrong, const char* what, size_t at, uint64_t gotBits, uint64_t wantBits,
                   const double* vals) {
  const coll_case_t* c = &run->c;
  if (wrong >= 3) return;
  char got[96];
  if (vals) snprintf(got, sizeof(got), "%.17g, expected %.17g (within %g)", vals[0], vals[1], vals[2]);
  else snprintf(got, sizeof(got), "0x%llx, expected 0x%llx", (unsigned long long)gotBits, (unsigned long long)wantBits);
  /* One write per line: the ranks share stderr. */
  fprintf(stderr, "rank %d: %s type %d op %d count %zu root %d inplace %d iter %d: %s %zu: %s\n", run->rank,
          cname[c->coll], c->type, c->op, c->count, c->root, c->inPlace, c->iter, what, at, got);
}

/* Elements [from, to) of the region that differ from what was uploaded:
 * the poison, or in the send buffer this rank's input. */
static long check_unchanged(const coll_run_t* run, size_t from, size_t to, long wrong) {
  int t = run->c.type;
  size_t ts = run->ts, sEnd = run->sBase + run->inCnt;
  long bad = 0;
  for (size_t e = from; e < to;) {
    int input = e >= run->sBase && e < sEnd;
    size_t stop = input ? (sEnd < to ? sEnd : to) : e < run->sBase ? (run->sBase < to ? run->sBase : to) : to;
    if (input && memcmp(run->host + e * ts, run->sent + (e - run->sBase) * ts, (stop - e) * ts) == 0) e = stop;
    for (; e < stop; e++) {
      if (!input && (e = const_differs(run->host, ts, e, stop, run->poison)) == stop) break;
      uint64_t got = bits_get(t, run->host, e), was = input ? bits_get(t, run->sent, e - run->sBase) : run->poison;
      if (got == was) continue;
      report(run, wrong + bad, "outside the result, changed: region element", e, got, was, NULL);
      bad++;
    }
  }
  return bad;
}

long coll_case_check(coll_run_t* run) {
  const coll_case_t* c = &run->c;
  run->mem->sync(run->stream);
  if (!run->mem->direct) run->mem->to_host(run->host, run->dev, run->bytes);
  if (is_premul(c->op)) CHECK_NCCL(ncclRedOpDestroy(run->rop, run->comm));
  if (run->scalar) run->mem->release(run->scalar);
  int t = c->type, rank = run->rank;
  size_t ts = run->ts, elems = run->bytes / ts, rBase = (size_t)(run->r - run->dev) / ts, outCnt = run->outCnt;
  /* Reduce and Gather leave a non-root's receive buffer alone. */
  if ((c->coll == C_REDUCE || c->coll == C_GATHER) && rank != c->root) outCnt = 0;
  const char* out = run->host + rBase * ts;
  long wrong = check_unchanged(run, 0, rBase, 0);
  wrong += check_unchanged(run, rBase + outCnt, elems, wrong);
  if (!coll_reduces(c->coll)) {
    for (size_t i = 0; i < outCnt; i++) {
      uint64_t got = bits_get(t, out, i), want = move_expect(run, i);
      if (got == want) continue;
      report(run, wrong, "element", i, got, want, NULL);
      wrong++;
    }
  } else {
    size_t first = c->coll == C_REDUCESCATTER ? (size_t)rank * c->count : 0;
    const red_table_t* tab = run->table;
    for (size_t i = 0; i < outCnt; i++) {
      int rot, j = red_row(run, first + i, &rot);
      if (tab->exact ? bits_get(t, out, i) == tab->expectBits[j] : fabs(get(t, out, i) - tab->expect[j]) <= tab->tol[j])
        continue;
      double vals[3] = {get(t, out, i), tab->expect[j], tab->tol[j]};
      report(run, wrong, "element", i, 0, 0, vals);
      wrong++;
    }
  }
  if (!run->mem->direct) free(run->host);
  run->mem->release(run->dev);
  free(run->table);
  free(run->sent);
  return wrong;
}

/* The big count (many steps and loops of the connection buffers) on a few
 * types per collective and op, every type on the small ones: moved data
 * in a 1- and a 4-byte type; Sum in fp32, int8 and bf16, Avg in fp32 (a
 * float premultiplication), the other ops in int8 or bf16. Quick: a tenth
 * of the count, fp32 only. */
static int large_case(int coll, int type, int op) {
  if (!coll_reduces(coll)) return type == ncclFloat32 || type == ncclInt8;
  if (op == ncclSum) return type == ncclFloat32 || type == ncclInt8 || type == ncclBfloat16;
  if (op == ncclAvg) return type == ncclFloat32;
  return type == (op % 2 ? ncclInt8 : ncclBfloat16);
}

long coll_matrix_run(ncclComm_t comm, int rank, int n, int quick, const coll_mem_t* mem, void* stream) {
  long wrong = 0;
  const size_t counts[] = {0, 1, 7, (size_t)(quick ? 100003 : 1000003)};
  int trace = getenv("TEST_COLL_TRACE") != NULL, iter = 0;
  for (int coll = 0; coll < C_N; coll++)
    for (int type = 0; type < ncclNumTypes; type++)
      for (int op = 0; op < (coll_reduces(coll) ? C_OP_N : 1); op++)
        for (int k = 0; k < 4; k++) {
          if (k == 3 && !(quick ? type == ncclFloat32 : large_case(coll, type, op))) continue;
          for (int root = 0; root < (coll_rooted(coll) ? 2 : 1); root++)
            for (int inPlace = 0; inPlace < 2; inPlace++) {
              coll_case_t c = {coll, type, op, root ? n - 1 : 0, inPlace, counts[k], iter++};
              coll_run_t run;
              coll_case_prepare(&run, &c, comm, rank, n, mem, stream);
              if (trace) /* which case a hang or a crash happened in */
                fprintf(stderr, "rank %d case %s type %d op %d count %zu root %d inplace %d\n", rank, cname[coll],
                        type, op, counts[k], c.root, c.inPlace);
              CHECK_NCCL(coll_case_launch(&run));
              wrong += coll_case_check(&run);
            }
        }
  return wrong;
}
