/* The planner's profiler events (plan_profile.h). */
#include "plan/plan_profile.h"

#include "comm/comm.h"
#include "profile/profile.h"
#include "tune/tune.h"

void* plan_profile_group_start(struct ncclComm* comm) { return profile_group_start(&comm->profile); }

void plan_profile_coll_start(struct ncclComm* comm, void* group, const plan_task_t* t, mk_work_t* w) {
  profile_comm_t* pc = &comm->profile;
  if (!profile_active(pc, ncclProfileColl)) return;
  profile_coll_t info = {tune_func_of_mk_coll(t->coll), t->sendbuff, t->recvbuff, t->count, t->root, (int)t->type,
                         w->nChannels, 0, w->algo, w->proto};
  w->profiler[0] = w->profiler[1] = profile_coll_start(pc, group, NULL, &info);
}

void plan_profile_p2p_start(struct ncclComm* comm, void* group, const plan_task_t* s, const plan_task_t* r,
                            mk_work_t* w) {
  profile_comm_t* pc = &comm->profile;
  if (!profile_active(pc, ncclProfileP2p)) return;
  if (r)
    w->profiler[0] = profile_p2p_start(pc, group, NULL, ncclFuncRecv, r->recvbuff, (int)r->type, r->count, r->peer,
                                       w->nChannels);
  if (s)
    w->profiler[1] = profile_p2p_start(pc, group, NULL, ncclFuncSend, (void*)s->sendbuff, (int)s->type, s->count,
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
