/* The planner's profiler events (plan_profile.c): a Group per launch, a
 * Coll or P2p per operation that becomes a work item, with NCCL's
 * hierarchy. The events ride on the work item (mk_work_t.profiler) to the
 * host executor (KernelCh) and the proxy ops (ProxyOp, ProxyStep). With
 * the activation mask clear each call is a load and a branch. */
#ifndef MKCCL_PLAN_PROFILE_H
#define MKCCL_PLAN_PROFILE_H

#include "device/common/work.h"
#include "group/task.h"

struct ncclComm;

/* API events (group/group.c): GroupApi from the call that joins comm to a
 * group (GroupStartApiStop at once: ncclGroupStart has returned) to the
 * group's end (GroupEndApiStart when it begins); a CollApi/P2pApi per
 * queued task (t->profApi), over its enqueue. */
void plan_profile_group_api_start(struct ncclComm* comm, int depth);
void plan_profile_task_api(struct ncclComm* comm, task_t* t);
void plan_profile_group_api_end_start(struct ncclComm* comm);
void plan_profile_group_api_stop(struct ncclComm* comm);
/* Around handing the items to the executor, under the GroupApi. */
void* plan_profile_launch_start(struct ncclComm* comm, void* stream);

void* plan_profile_group_start(struct ncclComm* comm);
/* w is planned (channels, algorithm, protocol): its Coll event. */
void plan_profile_coll_start(struct ncclComm* comm, void* group, const task_t* t, mk_work_t* w);
/* w pairs send s and receive r (either NULL): their P2p events. */
void plan_profile_p2p_start(struct ncclComm* comm, void* group, const task_t* s, const task_t* r,
                            mk_work_t* w);
/* The launch was handed to the executors (host: done): stop the items'
 * events, then the group (NCCL's meaning: enqueued). */
void plan_profile_stop(struct ncclComm* comm, const mk_work_t* works, int n, void* group);

#endif
