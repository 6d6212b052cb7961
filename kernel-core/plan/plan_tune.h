/* The tuner's answer for one collective, bounded by what the executors run
 * and what the communicator has (plan_tune.c). The tuning context itself
 * is the communicator's "tune" stage (kernel-core/tune/tune_comm_stage.c). */
#ifndef MKCCL_PLAN_TUNE_H
#define MKCCL_PLAN_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "nccl.h"
#include "group/task.h"

struct ncclComm;

/* Asks comm's tuning context (the model, NCCL_ALGO/NCCL_PROTO, the tuner
 * plugin) about collective t. numPipeOps: collectives in the same launch.
 * The tuner is offered the ring's chunk (what its steps hold); the chunk
 * returned fits the chosen algorithm's. Without a tuner plugin the channel
 * count stays the planner's own (defaultChannels). The choice is logged at
 * INFO (TUNING). */
ncclResult_t plan_tune_coll(struct ncclComm* comm, const task_t* t, int numPipeOps, int defaultChannels,
                            task_choice_t* out);
/* 1 when the planner runs t as FLAT (a small host AllReduce, never a
 * tuner's choice), with *out set to that choice; 0 otherwise. */
int plan_tune_flat(struct ncclComm* comm, const task_t* t, task_choice_t* out);

/* The model's (or tuner's) time for t on ring or tree, as if FLAT did not
 * exist: ncclGroupSimulateEnd's estimate for a FLAT AllReduce, which runs
 * only where it is faster (an upper bound). */
ncclResult_t plan_tune_predict(struct ncclComm* comm, const task_t* t, int numPipeOps, float* us);
/* Only the algorithm and protocol for collective `coll` (MK_COLL_*) of
 * `bytes` (NCCL's nBytes), as plan_tune_coll would pick them: for tests
 * and tools. */
ncclResult_t plan_tune_pick(struct ncclComm* comm, int coll, size_t bytes, int* algo, int* proto);

#endif
