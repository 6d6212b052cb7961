/* Every collective once and a Send/Recv ring in a group, on host buffers,
 * each result spot-checked: the workload of tests that watch what a run
 * reports (profiler events, traces) rather than its numerics. */
#ifndef MKCCL_TESTS_COLL_EACH_H
#define MKCCL_TESTS_COLL_EACH_H

#include <stddef.h>

#include "nccl.h"

/* AllReduce, AllGather, ReduceScatter, Broadcast (root 1), Reduce (root 1)
 * of `count` floats per rank, each a group of its own, then one group of a
 * Send to rank+1 and a Recv from rank-1. Needs n >= 2. */
void coll_each_run(ncclComm_t comm, int rank, int n, size_t count);

#endif
