/* Element arithmetic on the GPU for the 12 NCCL types: a compute type per
 * storage type (float for the narrow floating types), the reduction ops of
 * device/common/work.h, and the CTA-wide reduce-copy loop with 16-byte
 * vector accesses where the pointers allow. */
#ifndef MKCCL_CUDA_REDUCE_CUH
#define MKCCL_CUDA_REDUCE_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

#include "device/common/work.h"

template <typename T> struct mk_elem {
  typedef T C;
  __device__ static C load(T x) { return x; }
  __device__ static T store(C x) { return x; }
};
template <> struct mk_elem<__half> {
  typedef float C;
  __device__ static C load(__half x) { return __half2float(x); }
  __device__ static __half store(C x) { return __float2half_rn(x); }
};
template <> struct mk_elem<__nv_bfloat16> {
  typedef float C;
  __device__ static C load(__nv_bfloat16 x) { return __bfloat162float(x); }
  __device__ static __nv_bfloat16 store(C x) { return __float2bfloat16_rn(x); }
};
template <> struct mk_elem<__nv_fp8_e4m3> {
  typedef float C;
  __device__ static C load(__nv_fp8_e4m3 x) { return (float)x; }
  __device__ static __nv_fp8_e4m3 store(C x) { return __nv_fp8_e4m3(x); }
};
template <> struct mk_elem<__nv_fp8_e5m2> {
  typedef float C;
  __device__ static C load(__nv_fp8_e5m2 x) { return (float)x; }
  __device__ static __nv_fp8_e5m2 store(C x) { return __nv_fp8_e5m2(x); }
};

/* Integer sums and products wrap (two's complement), as on the host. */
template <typename C> static __device__ __forceinline__ C mk_add(C a, C b) { return a + b; }
template <typename C> static __device__ __forceinline__ C mk_mul(C a, C b) { return a * b; }
#define MK_WRAP(T, U)                                                                              \
  template <> __device__ __forceinline__ T mk_add<T>(T a, T b) { return (T)((U)a + (U)b); }       \
  template <> __device__ __forceinline__ T mk_mul<T>(T a, T b) { return (T)((U)a * (U)b); }
MK_WRAP(int8_t, uint8_t)
MK_WRAP(int32_t, uint32_t)
MK_WRAP(int64_t, uint64_t)

template <typename T, int OP> struct mk_op {
  typedef typename mk_elem<T>::C C;
  /* a: received (already combined), b: local input. */
  __device__ static C combine(C a, C b, C s) {
    switch (OP) {
      case MK_OP_PROD: return mk_mul<C>(a, b);
      case MK_OP_MAX: return a > b ? a : b;
      case MK_OP_MIN: return a < b ? a : b;
      case MK_OP_PREMULSUM: return mk_add<C>(a, mk_mul<C>(b, s));
      default: return mk_add<C>(a, b);
    }
  }
  __device__ static C pre(C b, C s) { return OP == MK_OP_PREMULSUM ? mk_mul<C>(b, s) : b; }
  __device__ static C post(C v, C s) { return OP == MK_OP_SUMPOSTDIV ? (C)(v / s) : v; }
};

template <typename T> static __device__ __forceinline__ typename mk_elem<T>::C mk_scalar(uint64_t bits, int op) {
  typedef typename mk_elem<T>::C C;
  if (op == MK_OP_SUMPOSTDIV) return (C)bits; /* a divisor */
  T t;
  memcpy(&t, &bits, sizeof(T));
  return mk_elem<T>::load(t);
}

template <typename A, typename B> struct mk_same { static constexpr bool v = false; };
template <typename A> struct mk_same<A, A> { static constexpr bool v = true; };

/* One element: x and y combined (or the one present, y pre-scaled), post-divided if asked. */
template <typename T, int OP>
static __device__ __forceinline__ T mk_combine_elem(bool hasA, bool hasB, T x, T y, typename mk_elem<T>::C s,
                                                    bool doPost) {
  typedef typename mk_elem<T>::C C;
  typedef mk_op<T, OP> O;
  C v = hasA && hasB ? O::combine(mk_elem<T>::load(x), mk_elem<T>::load(y), s)
                     : (hasB ? O::pre(mk_elem<T>::load(y), s) : mk_elem<T>::load(x));
  if (doPost) v = O::post(v, s);
  return mk_elem<T>::store(v);
}

/* The same for the elements of one pack: a 16-byte vector (Simple) or the
 * 8 data bytes of an LL line. */
template <typename T, int OP, typename V>
static __device__ __forceinline__ V mk_combine_pack(bool hasA, bool hasB, V x, V y, typename mk_elem<T>::C s,
                                                    bool doPost) {
  V r;
  const T* xt = (const T*)&x;
  const T* yt = (const T*)&y;
  T* rt = (T*)&r;
#pragma unroll
  for (int k = 0; k < (int)(sizeof(V) / sizeof(T)); k++) rt[k] = mk_combine_elem<T, OP>(hasA, hasB, xt[k], yt[k], s, doPost);
  return r;
}

/* dst0 (and dst1) = [post](a (+) [pre](b)); a or b may be NULL. Not
 * inlined, like mk_copy: one copy of each loop instead of one per ring
 * collective that calls it, so ptxas takes 40 s for the kernel instead of 3
 * minutes, and allocates each loop's registers on its own. */
template <typename T, int OP>
static __device__ __noinline__ void mk_reduce_copy(int tid, int nthreads, const char* a, const char* b, char* d0,
                                               char* d1, int64_t nelem, uint64_t scalarBits, int post) {
  typedef typename mk_elem<T>::C C;
  const C s = mk_scalar<T>(scalarBits, OP);
  const bool doPost = post && OP == MK_OP_SUMPOSTDIV;
  constexpr int V = 16 / sizeof(T);
  uintptr_t mis = (uintptr_t)a | (uintptr_t)b | (uintptr_t)d0 | (uintptr_t)d1;
  int64_t nvec = (mis & 15) ? 0 : nelem / V;
  const uint4* av = (const uint4*)a;
  const uint4* bv = (const uint4*)b;
  /* Sums of two inputs (the AllReduce and ReduceScatter hot path) load U
   * vectors per thread before combining any: several loads in flight per
   * thread, which a peer GPU's memory (P2P read) needs. Only SUM and AVG of
   * float, half and bfloat16: unrolling every op and type made the kernel's
   * build 2.3 times as long (ptxas), too slow for CI. */
  constexpr int U = 4;
  constexpr bool unrolled = (OP == MK_OP_SUM || OP == MK_OP_SUMPOSTDIV) &&
                            (mk_same<T, float>::v || mk_same<T, __half>::v || mk_same<T, __nv_bfloat16>::v);
  int64_t i = tid;
  if (unrolled && a && b) {
    for (; i + (U - 1) * nthreads < nvec; i += U * nthreads) {
      uint4 x[U], y[U];
#pragma unroll
      for (int u = 0; u < U; u++) {
        x[u] = av[i + u * nthreads];
        y[u] = bv[i + u * nthreads];
      }
#pragma unroll
      for (int u = 0; u < U; u++) {
        uint4 r = mk_combine_pack<T, OP, uint4>(true, true, x[u], y[u], s, doPost);
        ((uint4*)d0)[i + u * nthreads] = r;
        if (d1) ((uint4*)d1)[i + u * nthreads] = r;
      }
    }
  }
  for (; i < nvec; i += nthreads) {
    uint4 x, y;
    if (a) x = av[i];
    if (b) y = bv[i];
    uint4 r = mk_combine_pack<T, OP, uint4>(a != nullptr, b != nullptr, x, y, s, doPost);
    ((uint4*)d0)[i] = r;
    if (d1) ((uint4*)d1)[i] = r;
  }
  const T* at = (const T*)a;
  const T* bt = (const T*)b;
  for (i = nvec * V + tid; i < nelem; i += nthreads) {
    T r = mk_combine_elem<T, OP>(a != nullptr, b != nullptr, a ? at[i] : T(), b ? bt[i] : T(), s, doPost);
    ((T*)d0)[i] = r;
    if (d1) ((T*)d1)[i] = r;
  }
}

/* Plain copies (one input, no arithmetic): bytes, 16 at a time, U loads in
 * flight per thread before its stores. */
static __device__ __noinline__ void mk_copy(int tid, int nthreads, const char* src, char* d0, char* d1, int64_t bytes) {
  constexpr int U = 8;
  uintptr_t mis = (uintptr_t)src | (uintptr_t)d0 | (uintptr_t)d1;
  int64_t nvec = (mis & 15) ? 0 : bytes / 16;
  const uint4* s = (const uint4*)src;
  int64_t i = tid;
  for (; i + (U - 1) * nthreads < nvec; i += U * nthreads) {
    uint4 v[U];
#pragma unroll
    for (int k = 0; k < U; k++) v[k] = s[i + k * nthreads];
#pragma unroll
    for (int k = 0; k < U; k++) {
      ((uint4*)d0)[i + k * nthreads] = v[k];
      if (d1) ((uint4*)d1)[i + k * nthreads] = v[k];
    }
  }
  for (; i < nvec; i += nthreads) {
    uint4 v = s[i];
    ((uint4*)d0)[i] = v;
    if (d1) ((uint4*)d1)[i] = v;
  }
  for (int64_t j = nvec * 16 + tid; j < bytes; j += nthreads) {
    d0[j] = src[j];
    if (d1) d1[j] = src[j];
  }
}

#endif
