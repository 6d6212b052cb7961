// The UNPACK device code (docs/UNPACK.md), built as
// LTO-IR and linked with the core's kernels at run time. All threads of the
// caller's warps take part: each warp stages the metadata of up to
// UNPACK_WARP_PAGES pages in its shared-memory scratch, then copies those
// pages with the widest loads the offsets allow (16/8/4/2/1 bytes) and the
// tail bytes one per lane. cnt is read with a relaxed GPU-scope load: the
// proxy published the step (tail) after the producer published cnt.
#include <stdint.h>

extern "C" {
#include "net-device/mkccl_unpack_v7.h"
}

#define UNPACK_WARP 32
#ifndef UNPACK_WARP_PAGES  /* a build may stage fewer (at most 4: 64 bytes of scratch per warp) */
#define UNPACK_WARP_PAGES 4  // WARP_SHM_PAGE_CNT
#endif

static __device__ __forceinline__ uint64_t unpack_load64_gpu(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

template <int N> struct unpack_unit;
template <> struct unpack_unit<16> { typedef uint4 t; };
template <> struct unpack_unit<8> { typedef uint64_t t; };
template <> struct unpack_unit<4> { typedef uint32_t t; };
template <> struct unpack_unit<2> { typedef uint16_t t; };
template <> struct unpack_unit<1> { typedef uint8_t t; };

// The whole 16-byte groups of a page, N bytes per lane per access. Loads go
// out UNPACK_UNROLL at a time before their stores (a 4 KiB page at 16 bytes
// is exactly one round per warp): one load at a time leaves the copy
// latency-bound at ~70% of cuMemcpy's bandwidth.
#define UNPACK_UNROLL 8
template <int N>
static __device__ __forceinline__ void unpack_bulk(int t, uint32_t len, const char* src, char* dst) {
  typedef typename unpack_unit<N>::t U;
  const uint32_t bulk = len / 16 * 16, step = UNPACK_WARP * N;
  uint32_t off = (uint32_t)t * N;
  for (; off + (UNPACK_UNROLL - 1) * step + N <= bulk; off += UNPACK_UNROLL * step) {
    U v[UNPACK_UNROLL];
#pragma unroll
    for (int u = 0; u < UNPACK_UNROLL; u++) v[u] = *(const U*)(src + off + u * step);
#pragma unroll
    for (int u = 0; u < UNPACK_UNROLL; u++) *(U*)(dst + off + u * step) = v[u];
  }
  for (; off + N <= bulk; off += step) *(U*)(dst + off) = *(const U*)(src + off);
}

// Pages per warp per round: balanced over the warps, at most the scratch.
static __device__ __forceinline__ int unpack_ppw(int nbytes, int nw) {
  int v = (nbytes + MKCCL_UNPACK_PAGE_SIZE - 1) / MKCCL_UNPACK_PAGE_SIZE;
  v = (v + nw - 1) / nw;
  while (v > UNPACK_WARP_PAGES) v = (v + 1) / 2;
  return v < 1 ? 1 : v;
}

extern "C" __device__ uint64_t mkcclNetDevUnpackHead_v1(const void* handle) {
  return ((const mkcclUnpackHandle_v7*)handle)->head;
}

extern "C" __device__ void mkcclNetDevUnpackSaveHead_v1(void* handle, uint64_t head) {
  ((mkcclUnpackHandle_v7*)handle)->head = head;
}

extern "C" __device__ void mkcclNetDevUnpack_v1(const void* handle, uint64_t head, char* dst, int nbytes,
                                                void* warpScratch, int tid, int nthreads) {
  const mkcclUnpackHandle_v7* h = (const mkcclUnpackHandle_v7*)handle;
  const int w = tid / UNPACK_WARP, nw = nthreads / UNPACK_WARP, t = tid % UNPACK_WARP;
  const uint64_t slot = head % MKCCL_UNPACK_QUEUE_DEPTH;
  const mkcclUnpackLoadMeta_v7* g_meta = h->meta->mem[slot];
  const char* bounce = (const char*)h->bounce_buf;
  mkcclUnpackLoadMeta_v7* s_meta = (mkcclUnpackLoadMeta_v7*)warpScratch + w * UNPACK_WARP_PAGES;
  const uint64_t cnt = unpack_load64_gpu(h->meta->cnt + slot);
  const int ppw = unpack_ppw(nbytes, nw);
  for (uint64_t s = (uint64_t)w * ppw; s < cnt; s += (uint64_t)nw * ppw) {
    const int n = (int)(cnt - s < (uint64_t)ppw ? cnt - s : (uint64_t)ppw);
    if (t < n) {  // stage this round's metadata: one 128-bit load per lane
      uint4 m = *(const uint4*)(g_meta + s + t);
      *(uint4*)(s_meta + t) = m;
    }
    __syncwarp();
    for (int x = 0; x < n; x++) {
      mkcclUnpackLoadMeta_v7 m;
      *(uint4*)&m = *(const uint4*)(s_meta + x);
      const char* src = bounce + m.src_off;
      char* out = dst + m.dst_off;
      if (m.len >= 16) {
        unsigned a = (unsigned)((m.src_off | m.dst_off) % 16);
        a &= -a;
        if (a == 0) unpack_bulk<16>(t, m.len, src, out);
        else if (a & 8) unpack_bulk<8>(t, m.len, src, out);
        else if (a & 4) unpack_bulk<4>(t, m.len, src, out);
        else if (a & 2) unpack_bulk<2>(t, m.len, src, out);
        else unpack_bulk<1>(t, m.len, src, out);
      }
      if ((uint32_t)t < m.len % 16) {
        uint32_t off = m.len / 16 * 16 + (uint32_t)t;
        out[off] = ((const volatile char*)src)[off];
      }
    }
    __syncwarp();
  }
}
