/* Groups: calls between ncclGroupStart and ncclGroupEnd are queued per
 * communicator and run at the end, together; a call outside a bracket is a
 * group of one. The state is per thread, as in NCCL. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "comm/comm.h"
#include "plan/plan_profile.h"
#include "plan/plan_proxy.h"
#include "group/group.h"
#include "plan/plan.h"

static __thread int group_open;
static __thread struct ncclComm* group_comms; /* comms with queued tasks, linked via groupNext */
static __thread ncclResult_t group_error;     /* first error seen while queueing */

/* Tasks freed by this thread's last groups, reused by its next calls: a
 * malloc/free pair per operation is a large share of a small host
 * collective. Bounded; what is cached at thread exit stays reachable. */
#define TASK_CACHE_MAX 64
static __thread task_t* task_cache;
static __thread int task_cache_n;

static task_t* task_alloc(void) {
  task_t* t = task_cache;
  if (!t) return malloc(sizeof(*t));
  task_cache = t->next;
  task_cache_n--;
  return t;
}

static void task_release(task_t* t) {
  free(t->ownedBuf);
  t->ownedBuf = NULL;
  if (task_cache_n >= TASK_CACHE_MAX) {
    free(t);
    return;
  }
  t->next = task_cache;
  task_cache = t;
  task_cache_n++;
}

int group_depth(void) { return group_open; }

ncclResult_t group_start(void) {
  group_open++;
  return ncclSuccess;
}

ncclResult_t group_task_enqueue(struct ncclComm* comm, const task_t* task) {
  task_t* t = task_alloc();
  if (!t) {
    ncclResult_t res = MK_FAIL(ncclSystemError, "out of memory queueing an operation");
    if (group_error == ncclSuccess) group_error = res;
    return res;
  }
  *t = *task;
  t->next = NULL;
  t->profApi = NULL;
  t->tuned = 0;
  task_list_t* l = &comm->tasks;
  if (l->tail) l->tail->next = t;
  else l->head = t;
  l->tail = t;
  l->n++;
  if (task->kind != TASK_COLL) l->nP2p++;
  if (!comm->inGroup) {
    /* Inside from here to the group's end: an abort on another thread
     * waits for it (bounded) or leaves the comm to it, never frees it
     * under this thread's queued tasks. */
    comm_busy_enter(comm);
    comm->inGroup = 1;
    comm->groupNext = group_comms;
    group_comms = comm;
    plan_profile_group_api_start(comm, group_open);
  }
  plan_profile_task_api(comm, t);
  return ncclSuccess;
}

static void group_tasks_free(task_list_t* l) {
  task_t* t = l->head;
  while (t) {
    task_t* next = t->next;
    task_release(t);
    t = next;
  }
  memset(l, 0, sizeof(*l));
}

/* The group is done with comm: its tasks are dropped and its GroupApi
 * profiler event ends. */
static void group_comm_leave(struct ncclComm* c) {
  c->inGroup = 0;
  plan_profile_group_api_stop(c);
  group_tasks_free(&c->tasks);
}

/* Runs every queued communicator. Host collectives complete here. */
typedef struct {
  struct ncclComm* comm;
  pthread_t thread;
  ncclResult_t res;
  int ran; /* group_job ran (and released the comm) */
} group_job_t;

/* Runs one comm's tasks and is then done with the comm: an ncclCommAbort
 * on another thread waits only for this, not for the group's other comms. */
static void* group_job(void* arg) {
  group_job_t* j = arg;
  struct ncclComm* c = j->comm;
  j->ran = 1;
  if (comm_state_get(c) == COMM_STATE_ABORTED)
    j->res = MK_FAIL(ncclInvalidUsage, "ncclGroupEnd: comm %p (rank %d) was aborted by another thread while %d "
                     "operation(s) were queued on it: they did not run", (void*)c, c->rank, c->tasks.n);
  else j->res = plan_launch(c, &c->tasks);
  if (j->res != ncclSuccess) comm_async_error_set(c, j->res);
  group_comm_leave(c);
  comm_busy_leave(c); /* the last touch: an abort may free it now */
  return NULL;
}

/* GPU launches never wait on a peer once the connections they use are up
 * (point-to-point, and the trees the tuner picks: plan_connected): such
 * comms are launched one after the other on this thread (starting a thread
 * per comm would cost more than the launches). A comm's kernels only
 * ever wait on kernels launched before them, in this group or earlier. */
static int group_serial(const group_job_t* jobs, int n) {
  for (int i = 0; i < n; i++)
    if (jobs[i].comm->cudaDev < 0 || !plan_connected(jobs[i].comm, &jobs[i].comm->tasks)) return 0;
  return 1;
}

/* Runs every queued communicator. One comm runs on this thread; several
 * (one thread driving many ranks) each get a thread, because their
 * connection set-up and host collectives wait on each other, unless only
 * GPU launches remain (group_serial). */
static ncclResult_t group_run(void) {
  ncclResult_t res = group_error;
  struct ncclComm* comm = group_comms;
  group_comms = NULL;
  group_error = ncclSuccess;
  int n = 0; /* each is inside since it joined (group_task_enqueue) */
  for (struct ncclComm* c = comm; c; c = c->groupNext) n++;
  group_job_t one = {0}; /* the usual case: no allocation */
  group_job_t* jobs = n == 1 ? &one : n ? calloc((size_t)n, sizeof(*jobs)) : NULL;
  if (n && !jobs) {
    if (res == ncclSuccess) res = MK_FAIL(ncclSystemError, "out of memory running a group");
    for (struct ncclComm *c = comm, *next; c; c = next) {
      next = c->groupNext; /* the leave may free c */
      group_comm_leave(c);
      comm_busy_leave(c);
    }
  }
  /* Queue order is reversed; keep the order comms joined. */
  for (int i = n - 1; jobs && i >= 0; i--, comm = comm->groupNext) {
    jobs[i].comm = comm;
    plan_profile_group_api_end_start(comm);
  }
  if (res == ncclSuccess && (n == 1 || group_serial(jobs, n))) {
    for (int i = 0; i < n; i++) group_job(&jobs[i]);
  } else if (res == ncclSuccess) {
    int started = 0;
    for (; started < n; started++)
      if (pthread_create(&jobs[started].thread, NULL, group_job, &jobs[started]) != 0) break;
    if (started < n) res = MK_FAIL(ncclSystemError, "cannot start a thread for the group's communicators");
    for (int i = 0; i < started; i++) pthread_join(jobs[i].thread, NULL);
  }
  for (int i = 0; i < n && jobs; i++) {
    struct ncclComm* c = jobs[i].comm;
    if (!jobs[i].ran) { /* an earlier error: dropped unrun */
      group_comm_leave(c);
      comm_busy_leave(c);
    }
    if (jobs[i].res != ncclSuccess && res == ncclSuccess) res = jobs[i].res;
  }
  if (jobs != &one) free(jobs);
  return res;
}

ncclResult_t group_simulate_end(float* estimatedUs) {
  if (group_open != 1)
    return MK_FAIL(ncclInvalidUsage, "ncclGroupSimulateEnd: %s",
                   group_open == 0 ? "no group is open" : "it closes the outermost group only");
  group_open = 0;
  ncclResult_t res = group_error;
  struct ncclComm* comm = group_comms;
  group_comms = NULL;
  group_error = ncclSuccess;
  float most = 0;
  for (struct ncclComm *c = comm, *next; c; c = next) {
    float us = 0;
    ncclResult_t r = res == ncclSuccess ? plan_simulate(c, &c->tasks, &us) : ncclSuccess;
    if (r != ncclSuccess) res = r;
    if (us > most) most = us;
    next = c->groupNext; /* the leave may free c */
    group_comm_leave(c);
    comm_busy_leave(c);
  }
  if (res == ncclSuccess) *estimatedUs = most;
  return res;
}

ncclResult_t group_end(void) {
  if (group_open == 0) return MK_FAIL(ncclInvalidUsage, "ncclGroupEnd called without a matching ncclGroupStart");
  if (--group_open > 0) return ncclSuccess;
  return group_run();
}

int group_comm_drop(struct ncclComm* comm) {
  for (struct ncclComm** at = &group_comms; *at; at = &(*at)->groupNext) {
    if (*at != comm) continue;
    *at = comm->groupNext;
    group_comm_leave(comm);
    comm_busy_leave(comm); /* the caller still holds the comm: never the last */
    return 1;
  }
  return 0;
}
