/* The planner's use of kernel-core/tune: one tuning context per
 * communicator, made from its topology, and the algorithm each collective
 * runs with (the executors' support, NCCL_ALGO / NCCL_PROTO and the cost
 * model decide). */
#ifndef MKCCL_PLAN_TUNE_H
#define MKCCL_PLAN_TUNE_H

#include <stddef.h>

#include "nccl.h"

struct ncclComm;

/* comm->dp.tune from the peers' hosts (nodes, ranks per node). */
ncclResult_t plan_tune_create(struct ncclComm* comm);
void plan_tune_destroy(struct ncclComm* comm);

/* MK_ALGO_* and MK_PROTO_* for collective `coll` (MK_COLL_*) of `bytes`
 * (NCCL's nBytes); logged at INFO (TUNING). */
ncclResult_t plan_tune_pick(struct ncclComm* comm, int coll, size_t bytes, int* algo, int* proto);

#endif
