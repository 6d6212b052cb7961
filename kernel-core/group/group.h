/* Groups: the calls between ncclGroupStart and ncclGroupEnd, queued per
 * communicator and run together when the outermost group ends (group.c). */
#ifndef MKCCL_GROUP_GROUP_H
#define MKCCL_GROUP_GROUP_H

#include "nccl.h"
#include "group/task.h"

struct ncclComm;

/* Queue a task on comm (copied); joins comm to the current group. */
ncclResult_t group_task_enqueue(struct ncclComm* comm, const task_t* task);

/* Group bracket: ncclGroupStart/ncclGroupEnd and the implicit group of a
 * single call outside any bracket. */
ncclResult_t group_start(void);
ncclResult_t group_end(void);
/* ncclGroupSimulateEnd: closes the outermost group without running it;
 * *estimatedUs: the slowest communicator's predicted time (plan_simulate). */
ncclResult_t group_simulate_end(float* estimatedUs);
/* Drops comm's tasks from this thread's open group, if it joined it
 * (ncclCommAbort or ncclCommDestroy called before the group's end): 1 if it
 * had, 0 if not. The group then ends without it. */
int group_comm_drop(struct ncclComm* comm);
/* This thread's open groups (0: outside any bracket). */
int group_depth(void);

#endif
