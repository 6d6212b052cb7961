/* CollNet AllReduce's schedule, for the planner and the host executor: each
 * channel of an item takes one contiguous part of the input (whole 16-byte
 * element groups) and moves it chunk by chunk, one step to the collnet
 * connection and one step back per chunk. The proxy posts one collnet
 * request per step, so planner, executor and proxy count the same steps. */
#ifndef MKCCL_DEVICE_SCHED_COLLNET_H
#define MKCCL_DEVICE_SCHED_COLLNET_H

#include <stdint.h>

#include "device/common/steps.h"

/* Channel `bid` of `nChannels`: elements [*off, *off + *len) of `count`, in
 * *nChunks chunks of chunkElems (the last one may be shorter, none is
 * empty); a channel past the end of the input has no chunks. */
MK_HD void sched_collnet_part(int64_t count, int nChannels, int bid, int64_t chunkElems, int64_t align,
                              int64_t* off, int64_t* len, int64_t* nChunks) {
  int64_t per = MK_ROUND_UP(MK_DIV_UP(count, (int64_t)(nChannels > 0 ? nChannels : 1)), align);
  int64_t lo = (int64_t)bid * per;
  int64_t n = count - lo;
  if (n < 0) n = 0;
  if (n > per) n = per;
  *off = lo;
  *len = n;
  *nChunks = chunkElems > 0 ? MK_DIV_UP(n, chunkElems) : 0;
}

#endif
