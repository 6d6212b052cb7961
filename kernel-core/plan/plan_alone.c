/* A small host collective called on its own: run at once on the calling
 * thread. The general path queues it as a group of one, plans it with
 * proxy ops and a profiler group, and hands it to the executor through the
 * work FIFO; for an 8 B AllReduce on 2 ranks over SHM that bookkeeping was
 * most of the time (the exchange itself is one line each way). Here only
 * what such a run needs is done: the same tuned choice, the same work item
 * and counters, the same executor code on channel 0. Anything else (a
 * group, a GPU, a profiler, a first use of FLAT, a connection the proxy
 * drives) takes the general path. */
#include "base/err.h"
#include "comm/comm.h"
#include "exec/exec.h"
#include "plan/plan_tune.h"
#include "plan/plan.h"

/* What FLAT itself needs (an AllReduce of 2 to 8 ranks, its size, no
 * tuner) plan_tune_flat decides. */
static int plan_alone_fits(const struct ncclComm* comm, const task_t* t) {
  return comm->cudaDev < 0 && t->kind == TASK_COLL && t->count > 0 &&
         comm->dp.ch.flatConnected && comm->dp.ch.flatNoProxy && __atomic_load_n(&comm->profile.mask, __ATOMIC_RELAXED) == 0;
}

ncclResult_t plan_alone_run(struct ncclComm* comm, task_t* t, int* ran) {
  *ran = 0;
  if (!plan_alone_fits(comm, t)) return ncclSuccess;
  if (!plan_tune_flat(comm, t, &t->choice)) return ncclSuccess;
  *ran = 1;
  mk_work_t w;
  plan_coll_work(comm, t, &w);
  comm->dp.aloneCount++;
  ncclResult_t res = comm->dp.exec.ops->run_here(comm->dp.exec.state, &w);
  if (res != ncclSuccess) {
    res = plan_exec_failed(comm, res);
    comm_async_error_set(comm, res);
  }
  watch_ops_done(comm);
  return res;
}
