/* ncclGroupSimulateEnd's estimate: what the tuning context predicts for each
 * queued collective, with the channels and chunk the planner would use;
 * nothing is planned for real, nothing moves. */
#include "base/err.h"
#include "comm/comm.h"
#include "plan/plan_tune.h"
#include "plan/plan.h"

ncclResult_t plan_simulate(struct ncclComm* comm, const task_list_t* tasks, float* us) {
  int nColl = tasks->n - tasks->nP2p;
  float total = 0;
  for (const task_t* t = tasks->head; t; t = t->next) {
    if (t->kind != TASK_COLL || t->count == 0 || comm->nRanks == 1) continue;
    task_choice_t c;
    MK_CHECK(plan_tune_coll(comm, t, nColl, comm->dp.ch.nChannels, &c));
    /* FLAT and the GPU's LL rule have no model time: the model's own pick's
     * (an upper bound: each runs only where it measured faster). */
    if (c.predictedUs < 0) MK_CHECK(plan_tune_predict(comm, t, nColl, &c.predictedUs));
    if (c.predictedUs > 0) total += c.predictedUs;
  }
  *us = total;
  return ncclSuccess;
}
