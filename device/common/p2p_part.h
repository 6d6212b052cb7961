/* How a transfer is cut: one channel's part of `bytes`, in chunks (an
 * empty part still moves one empty chunk, so both ends step together).
 * Shared by the executors and the planner. */
#ifndef MKCCL_DEVICE_P2P_PART_H
#define MKCCL_DEVICE_P2P_PART_H

#include "device/common/steps.h"

MK_HD int64_t coll_clamp(int64_t count, int64_t off, int64_t chunk) {
  int64_t left = count - off;
  return left <= 0 ? 0 : (left < chunk ? left : chunk);
}

/* Point-to-point: this channel's part of `bytes`, in chunks. */
MK_HD void coll_p2p_part(int64_t bytes, int nChannels, int bid, int64_t chunk, int64_t* off, int64_t* len,
                         int* chunks) {
  int64_t part = MK_ROUND_UP(MK_DIV_UP(bytes, (int64_t)nChannels), (int64_t)16);
  *off = (int64_t)bid * part;
  *len = coll_clamp(bytes, *off, part);
  *chunks = *len ? (int)MK_DIV_UP(*len, chunk) : 1;
}

#endif
