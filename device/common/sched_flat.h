/* FLAT AllReduce's schedule, written once for the executors and the
 * planner (which counts its steps): FLAT in one step up to a chunk, direct
 * beyond (device/common/coll_flat.h says how direct moves its pieces). */
#ifndef MKCCL_DEVICE_SCHED_FLAT_H
#define MKCCL_DEVICE_SCHED_FLAT_H

#include "device/common/steps.h"

/* FLAT in one step (every rank's whole input to every other) fits in a
 * chunk; anything longer runs direct. */
MK_HD int mk_flat_direct(int64_t bytes, int64_t chunkBytes) { return bytes > chunkBytes; }

typedef struct {
  int64_t count;  /* elements of the whole buffer */
  int64_t piece;  /* elements of a rank's piece (the last may be shorter) */
  int64_t part;   /* of a piece, per channel */
  int64_t chunk;  /* of a part, per loop */
  int64_t nLoops; /* chunks of a part: the same on every channel and rank */
} mk_flat_shape_t;

MK_HD void mk_flat_shape(mk_flat_shape_t* s, int64_t count, int nRanks, int nChannels, int64_t chunkElems,
                         int64_t align) {
  s->count = count;
  s->piece = MK_ROUND_UP(MK_DIV_UP(count, (int64_t)nRanks), align);
  s->part = MK_ROUND_UP(MK_DIV_UP(s->piece, (int64_t)nChannels), align);
  s->chunk = chunkElems < s->part ? chunkElems : s->part;
  if (s->chunk < 1) s->chunk = 1;
  s->nLoops = MK_DIV_UP(s->part, s->chunk);
}

/* Chunk l of channel bid's part of rank r's piece: its first element
 * (*off, within the buffer) and its length (0 past the piece's end). */
MK_HD int64_t mk_flat_chunk(const mk_flat_shape_t* s, int r, int bid, int64_t l, int64_t* off) {
  int64_t pieceEnd = (r + 1) * s->piece < s->count ? (r + 1) * s->piece : s->count;
  int64_t partEnd = r * s->piece + (bid + 1) * s->part;
  if (partEnd > pieceEnd) partEnd = pieceEnd;
  int64_t o = r * s->piece + bid * s->part + l * s->chunk;
  int64_t end = o + s->chunk < partEnd ? o + s->chunk : partEnd;
  *off = o < s->count ? o : s->count;
  return end > o ? end - o : 0;
}

/* Steps each of a channel's FLAT connections (either way, with every other
 * rank) moves for a direct AllReduce of nLoops chunks. */
MK_HD uint64_t mk_flat_conn_steps(int64_t nLoops) { return 2 * (uint64_t)nLoops; }

#endif
