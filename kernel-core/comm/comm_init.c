/* The init sequence of a communicator: one ordered table of stages. A
 * module adds its stage with one line, where it belongs in the order.
 * Destroy undoes the completed stages in reverse; finalize flushes them in
 * reverse. */
#include "base/err.h"
#include "comm/comm.h"

static const comm_stage_t comm_stages[] = {
    {"bootstrap", comm_bootstrap_stage_init, NULL, comm_bootstrap_stage_destroy},
    {"watch-listen", comm_watch_listen_stage_init, NULL, comm_watch_listen_stage_destroy},
    {"peer-info", comm_peer_info_stage_init, NULL, comm_peer_info_stage_destroy},
    {"watch", comm_watch_stage_init, NULL, comm_watch_stage_destroy},
    {"profile", comm_profile_stage_init, NULL, comm_profile_stage_destroy},
    {"data-path", comm_dp_stage_init, comm_dp_stage_finalize, comm_dp_stage_destroy},
    {"windows", comm_windows_stage_init, NULL, comm_windows_stage_destroy}, /* gone before the data path */
    {"tune", comm_tune_stage_init, NULL, comm_tune_stage_destroy},
    {"goodbye", comm_watch_goodbye_stage_init, NULL, comm_watch_goodbye_stage_destroy},
    /* more stages: one line each, here */
    {"ready", comm_ready_stage_init, NULL, NULL}, /* last: every rank is through every stage */
};
#define COMM_NSTAGES ((int)(sizeof(comm_stages) / sizeof(comm_stages[0])))

ncclResult_t comm_stages_init(struct ncclComm* comm) {
  for (int i = comm->stagesDone; i < COMM_NSTAGES; i++) {
    MK_TRACE(NCCL_INIT, "comm %p rank %d: stage %s", (void*)comm, comm->rank, comm_stages[i].name);
    MK_CHECK(comm_stages[i].init(comm));
    comm->stagesDone = i + 1;
  }
  return ncclSuccess;
}

ncclResult_t comm_stages_finalize(struct ncclComm* comm) {
  ncclResult_t first = ncclSuccess;
  for (int i = comm->stagesDone - 1; i >= 0; i--) {
    if (!comm_stages[i].finalize) continue;
    ncclResult_t res = comm_stages[i].finalize(comm);
    if (res != ncclSuccess && first == ncclSuccess) first = res;
  }
  return first;
}

void comm_stages_destroy(struct ncclComm* comm) {
  for (int i = comm->stagesDone - 1; i >= 0; i--) {
    if (comm_stages[i].destroy) comm_stages[i].destroy(comm);
    comm->stagesDone = i;
  }
}
