/* The tuner's answer for one collective, bounded by what the executors run
 * and what the communicator has (plan_tune.c). */
#ifndef MKCCL_PLAN_TUNE_H
#define MKCCL_PLAN_TUNE_H

#include <stdint.h>

#include "nccl.h"
#include "plan/task.h"

struct ncclComm;

typedef struct {
  int algo;           /* NCCL_ALGO_* (== MK_ALGO_*) */
  int proto;          /* NCCL_PROTO_* (== MK_PROTO_*) */
  int nChannels;      /* in [1, the communicator's channels] */
  int64_t chunkBytes; /* in [one aligned element group, chunkBytesMax], a multiple of it */
} plan_choice_t;

/* Asks comm's tuning context (the model, NCCL_ALGO/NCCL_PROTO, the tuner
 * plugin) about collective t. numPipeOps: collectives in the same launch.
 * chunkBytesMax: what a chunk's steps hold (the planner's default). Without
 * a tuner plugin the channel count stays the planner's own (defaultChannels). */
ncclResult_t plan_tune_coll(struct ncclComm* comm, const plan_task_t* t, int numPipeOps, int64_t chunkBytesMax,
                            int defaultChannels, plan_choice_t* out);

#endif
