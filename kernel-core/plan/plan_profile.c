/* The planner's profiler events (plan_profile.h). */
#include "plan/plan_profile.h"

#include "comm/comm.h"
#include "profile/profile.h"
#include "tune/tune.h"

void plan_profile_group_api_start(struct ncclComm* comm, int depth) {
  comm->profGroupApi = profile_group_api_start(&comm->profile, depth, 0);
  profile_group_api_state(&comm->profile, comm->profGroupApi, ncclProfilerGroupStartApiStop);
}

void plan_profile_task_api(struct ncclComm* comm, task_t* t) {
  profile_comm_t* pc = &comm->profile;
  if (t->kind == TASK_COLL)
    t->profApi = profile_coll_api_start(pc, comm->profGroupApi, tune_func_of_mk_coll(t->coll), t->count, (int)t->type,
                                        t->root, t->stream, 0);
  else
    t->profApi = profile_p2p_api_start(pc, comm->profGroupApi, t->kind == TASK_SEND ? ncclFuncSend : ncclFuncRecv,
                                       t->count, (int)t->type, t->stream, 0);
  profile_event_stop(pc, t->profApi); /* the call is its enqueue; the handle stays a parent */
}

void plan_profile_group_api_end_start(struct ncclComm* comm) {
  profile_group_api_state(&comm->profile, comm->profGroupApi, ncclProfilerGroupEndApiStart);
}

void plan_profile_group_api_stop(struct ncclComm* comm) {
  profile_group_api_stop(&comm->profile, comm->profGroupApi);
  comm->profGroupApi = NULL;
}

void* plan_profile_launch_start(struct ncclComm* comm, void* stream) {
  return profile_kernel_launch_start(&comm->profile, comm->profGroupApi, stream);
}

void* plan_profile_group_start(struct ncclComm* comm) { return profile_group_start(&comm->profile); }

void plan_profile_coll_start(struct ncclComm* comm, void* group, const task_t* t, mk_work_t* w) {
  profile_comm_t* pc = &comm->profile;
  if (!profile_active(pc, ncclProfileColl)) return;
  profile_coll_t info = {tune_func_of_mk_coll(t->coll), t->sendbuff, t->recvbuff, t->count, t->root, (int)t->type,
                         w->nChannels, 0, w->algo, w->proto};
  w->profiler[0] = w->profiler[1] = profile_coll_start(pc, group, t->profApi, &info);
}

void plan_profile_p2p_start(struct ncclComm* comm, void* group, const task_t* s, const task_t* r,
                            mk_work_t* w) {
  profile_comm_t* pc = &comm->profile;
  if (!profile_active(pc, ncclProfileP2p)) return;
  if (r)
    w->profiler[0] = profile_p2p_start(pc, group, r->profApi, ncclFuncRecv, r->recvbuff, (int)r->type, r->count, r->peer,
                                       w->nChannels);
  if (s)
    w->profiler[1] = profile_p2p_start(pc, group, s->profApi, ncclFuncSend, (void*)s->sendbuff, (int)s->type, s->count,
                                       s->peer, w->nChannels);
}

void plan_profile_stop(struct ncclComm* comm, const mk_work_t* works, int n, void* group) {
  profile_comm_t* pc = &comm->profile;
  /* Not on the mask: it may have been cleared since these started. */
  for (int i = 0; i < n; i++) {
    profile_event_stop(pc, works[i].profiler[0]);
    if (works[i].profiler[1] != works[i].profiler[0]) profile_event_stop(pc, works[i].profiler[1]);
  }
  profile_event_stop(pc, group);
}
