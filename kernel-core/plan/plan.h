/* The planner: queued tasks into work items and proxy ops, run on the
 * communicator's executor. */
#ifndef MKCCL_PLAN_PLAN_H
#define MKCCL_PLAN_PLAN_H

#include "device/common/work.h"
#include "group/task.h"
#include "nccl.h"

struct ncclComm;

/* The cost model's time for comm's queued collectives, run one after the
 * other (point-to-point has no model: 0). */
ncclResult_t plan_simulate(struct ncclComm* comm, const task_list_t* tasks, float* us);

/* Plan and run everything queued on comm: host collectives complete here,
 * GPU ones are queued on the stream. */
ncclResult_t plan_launch(struct ncclComm* comm, task_list_t* tasks);

/* A collective task's work item, from its tuned choice (plan_host.c):
 * counts the operation (opCount, algoCount). */
void plan_coll_work(struct ncclComm* comm, const task_t* t, mk_work_t* w);
/* What a failed run returns: the proxy's error if it has one (a network
 * peer failed), else res; the last-error text says which. */
ncclResult_t plan_exec_failed(struct ncclComm* comm, ncclResult_t res);

/* A collective called outside any group (the caller checks) on a host
 * communicator, which FLAT runs over connections made already that need no
 * proxy, with no profiler: run here at once (plan_alone.c). *ran is 0 where that does not
 * hold, and the caller takes the general path. The caller is inside the
 * comm (comm_busy_enter) for the call. */
ncclResult_t plan_alone_run(struct ncclComm* comm, task_t* t, int* ran);

#endif
