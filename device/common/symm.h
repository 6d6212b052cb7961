/* What the planner and the GPU kernels agree on for symmetric collectives
 * (MK_ALGO_SYMM): the resource window's layout and how a collective's
 * elements are split over ranks and channels. */
#ifndef MKCCL_DEVICE_SYMM_H
#define MKCCL_DEVICE_SYMM_H

#include <stdint.h>

#if defined(__CUDACC__)
#define MK_SYMM_FN __host__ __device__ __forceinline__
#else
#define MK_SYMM_FN static inline
#endif

/* Channels (CTAs) a symmetric item may use: each has its own barrier. */
#define MK_SYMM_CHANNELS 64

/* The resource window of a communicator of nRanks: per channel, the epoch
 * of its last barrier (this rank's own copy only), then per channel and
 * rank the epoch that rank last arrived at (written by that rank into every
 * peer's copy). 64-bit words that only grow. */
MK_SYMM_FN uint64_t mk_symm_res_bytes(int nRanks) { return 8ull * MK_SYMM_CHANNELS * (1ull + (uint64_t)nRanks); }
MK_SYMM_FN uint64_t mk_symm_epoch_off(int channel) { return 8ull * (uint64_t)channel; }
MK_SYMM_FN uint64_t mk_symm_inbox_off(int nRanks, int channel, int from) {
  return 8ull * MK_SYMM_CHANNELS + 8ull * ((uint64_t)channel * (uint64_t)nRanks + (uint64_t)from);
}

/* Part `i` of `parts` of n elements: whole groups of `align` elements (16
 * bytes) each but the last, the last parts possibly empty. Every rank cuts
 * alike, so each part has one owner everywhere. */
MK_SYMM_FN void mk_symm_part(int64_t n, int parts, int i, int64_t align, int64_t* off, int64_t* len) {
  int64_t per = (n + parts - 1) / parts;
  per = (per + align - 1) / align * align;
  int64_t lo = per * i, hi = lo + per;
  if (lo > n) lo = n;
  if (hi > n) hi = n;
  *off = lo;
  *len = hi - lo;
}

#endif
