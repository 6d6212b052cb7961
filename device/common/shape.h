/* Chunk and slice shapes per collective and algorithm (in steps), as NCCL
 * uses them for the Simple protocol: rings pipeline 4-step chunks in 2-step
 * slices; trees, chains (broadcast, reduce), flat, CollNet and p2p go step
 * by step. */
#ifndef MKCCL_DEVICE_SHAPE_H
#define MKCCL_DEVICE_SHAPE_H

#include "device/common/work.h"
#include "device/common/steps.h"

MK_HD void mk_coll_shape(int coll, int algo, int* chunkSteps, int* sliceSteps) {
  if (algo == MK_ALGO_TREE || algo == MK_ALGO_FLAT || algo == MK_ALGO_COLLNET_DIRECT)
    coll = MK_COLL_BROADCAST; /* step by step */
  switch (coll) {
    case MK_COLL_ALLREDUCE:
    case MK_COLL_ALLGATHER:
    case MK_COLL_REDUCESCATTER: *chunkSteps = 4; *sliceSteps = 2; break;
    default: *chunkSteps = 1; *sliceSteps = 1; break;
  }
}

/* The same for a protocol: LL moves one step per chunk (its lines carry
 * their own flags, so there is nothing to pipeline within a chunk). */
MK_HD void mk_coll_shape_proto(int coll, int algo, int proto, int* chunkSteps, int* sliceSteps) {
  if (proto == MK_PROTO_LL) {
    *chunkSteps = *sliceSteps = 1;
    return;
  }
  mk_coll_shape(coll, algo, chunkSteps, sliceSteps);
}

/* Elements a chunk boundary is aligned to: 16 bytes, for vector loads. */
MK_HD int64_t mk_elem_align(int typeSize) { return typeSize >= 16 ? 1 : 16 / typeSize; }

#endif
