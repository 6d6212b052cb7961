/* Stage "tune": a communicator's tuning context, made from what init
 * learned about the ranks (nRanks, nodes, GPU or host) and the process's
 * tuner plugin, if one loads. The planner asks it for every collective
 * (plan/plan_tune.c). */
#include "base/err.h"
#include "base/param.h"
#include "comm/comm.h"
#include "tune/tune.h"

/* Most ranks any one host holds. */
static int tune_ranks_per_node(struct ncclComm* comm) {
  int most = 1;
  for (int r = 0; r < comm->nRanks; r++) {
    int same = comm_peer_host_ranks(comm, r);
    if (same > most) most = same;
  }
  return most;
}

ncclResult_t comm_tune_stage_init(struct ncclComm* comm) {
  costmodel_topo_t topo;
  costmodel_topo_default(&topo, comm->nRanks, comm->nNodes);
  topo.ranksPerNode = tune_ranks_per_node(comm);
  topo.gpu = comm->cudaDev >= 0;
  topo.collnet = comm->dp.collnet != NULL; /* opened with the data path, on every rank or none */
  /* Host ranks of one host over shared memory, each on a CPU of its own:
   * a hop costs a fraction of a microsecond, not NCCL's PCI constants (with
   * those the model keeps the tree far past the sizes where the ring is
   * faster). Where ranks outnumber CPUs a hop waits for a rank to be
   * scheduled: the constants. */
  if (comm->dp.par.hostShmCores) topo.intraLatUs = (double)param_MKCCL_HOST_SHM_HOP_NS() / 1000.0;
  const ncclTuner_v6_t* tuner = NULL;
  MK_CHECK(tune_plugin_acquire(&tuner));
  ncclResult_t res = tune_ctx_create(&topo, tuner, comm->commHash, &comm->tune);
  if (res != ncclSuccess) tune_plugin_release();
  return res;
}

void comm_tune_stage_destroy(struct ncclComm* comm) {
  tune_ctx_destroy(comm->tune); /* the plugin's finalize, before its library may close */
  comm->tune = NULL;
  tune_plugin_release();
}
