/* The reductions collnet-soft's aggregator does: sum, prod, max and min of
 * the 8, 32 and 64-bit integers and of float and double. Pure functions of
 * their buffers (they run in the forked aggregator, which calls no malloc). */
#ifndef COLLNET_SOFT_REDUCE_H
#define COLLNET_SOFT_REDUCE_H

#include <stddef.h>

#include "nccl.h"

/* Bytes of one element of a supported type, 0 for any other. */
size_t collnet_soft_type_size(ncclDataType_t type);
int collnet_soft_supported(ncclDataType_t type, ncclRedOp_t op);
/* acc[i] = acc[i] op in[i] for count elements; -1 when not supported. */
int collnet_soft_reduce(void* acc, const void* in, size_t count, ncclDataType_t type, ncclRedOp_t op);

#endif
