/* Chunks, slices and steps (DESIGN.md, "Steps, chunks and slices").
 *
 * A connection's buffer has MKCCL_STEPS steps of stepSize bytes. An algorithm
 * moves data in chunks of chunkSteps steps; each chunk is cut in slices of
 * sliceSteps steps, the unit of one FIFO publish. Every primitive call moves
 * exactly one chunk (empty slices included), so both ends and the proxy agree
 * on step numbers without talking. A new operation on a connection starts at
 * a base rounded up to chunkSteps. Shared by host and GPU code. */
#ifndef MKCCL_FIFO_STEPS_H
#define MKCCL_FIFO_STEPS_H

#include <stdint.h>

#if defined(__CUDACC__)
#define MK_HD __host__ __device__ __forceinline__
#else
#define MK_HD static inline
#endif

#define MK_DIV_UP(x, y) (((x) + (y)-1) / (y))
#define MK_ROUND_UP(x, y) (MK_DIV_UP((x), (y)) * (y))

typedef struct {
  int chunkSteps;  /* steps per chunk */
  int sliceSteps;  /* steps per slice */
  int stepSize;    /* bytes per step */
} steps_shape_t;

MK_HD int steps_slices_per_chunk(steps_shape_t s) { return s.chunkSteps / s.sliceSteps; }
MK_HD int64_t steps_chunk_bytes(steps_shape_t s) { return (int64_t)s.chunkSteps * s.stepSize; }
MK_HD int64_t steps_slice_bytes(steps_shape_t s) { return (int64_t)s.sliceSteps * s.stepSize; }

/* First step of a new operation: previous end rounded up to chunkSteps. */
MK_HD uint64_t steps_op_base(uint64_t connStep, int chunkSteps) {
  /* Chunks of 1, 2 or 4 steps: a mask, not a 64-bit division on every
   * operation's start (a visible share of a small host collective). */
  uint64_t c = (uint64_t)chunkSteps;
  if ((c & (c - 1)) == 0) return (connStep + c - 1) & ~(c - 1);
  return MK_ROUND_UP(connStep, c);
}

/* Bytes per slice for a chunk of `chunkBytes`: a full slice, or for a small
 * chunk an equal share of it (16-byte multiples) so every slice works. */
MK_HD int64_t steps_slice_size(steps_shape_t s, int64_t chunkBytes) {
  int n = steps_slices_per_chunk(s);
  int64_t share = MK_ROUND_UP(MK_DIV_UP(chunkBytes, (int64_t)n), (int64_t)16);
  int64_t full = steps_slice_bytes(s);
  return share < full ? share : full;
}

/* Bytes carried by slice `slice` of a chunk holding `chunkBytes` bytes. */
MK_HD int64_t steps_slice_len(steps_shape_t s, int64_t chunkBytes, int slice) {
  int64_t sliceBytes = steps_slice_size(s, chunkBytes);
  int64_t off = (int64_t)slice * sliceBytes;
  if (off >= chunkBytes) return 0;
  return chunkBytes - off < sliceBytes ? chunkBytes - off : sliceBytes;
}

#endif
