/* Algorithm and protocol per collective (see plan_tune.h). */
#include "plan/plan_tune.h"

#include <stdlib.h>

#include "base/err.h"
#include "base/log.h"
#include "comm/comm.h"
#include "device/common/work.h"
#include "tune/tune.h"

/* Most ranks any one host holds. */
static int plan_tune_ranks_per_node(struct ncclComm* comm) {
  int most = 1;
  for (int r = 0; r < comm->nRanks; r++) {
    int same = 0;
    for (int s = 0; s < comm->nRanks; s++) same += comm_peer_same_host(comm, r, s);
    if (same > most) most = same;
  }
  return most;
}

ncclResult_t plan_tune_create(struct ncclComm* comm) {
  tune_topo_t topo;
  tune_topo_default(&topo, comm->nRanks, comm->nNodes);
  topo.ranksPerNode = plan_tune_ranks_per_node(comm);
  topo.gpu = comm->cudaDev >= 0;
  /* The tuner plugin is wired in by the tuner issue: the built-in model decides. */
  return tune_ctx_create(&topo, NULL, comm->commHash, &comm->dp.tune);
}

void plan_tune_destroy(struct ncclComm* comm) {
  tune_ctx_destroy(comm->dp.tune);
  comm->dp.tune = NULL;
}

/* What the executors run: the host one rings and trees (AllReduce), the GPU
 * one rings; Simple protocol only, so far. */
static void plan_tune_supported(struct ncclComm* comm, int coll, int supported[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS]) {
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) supported[a][p] = 0;
  supported[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] = 1;
  if (comm->cudaDev < 0 && coll == MK_COLL_ALLREDUCE) supported[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE] = 1;
}

ncclResult_t plan_tune_pick(struct ncclComm* comm, int coll, size_t bytes, int* algo, int* proto) {
  int supported[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  plan_tune_supported(comm, coll, supported);
  int func = tune_func_of_mk_coll(coll);
  tune_choice_t c;
  MK_CHECK(tune_decide(comm->dp.tune, func, bytes, comm->dp.nChannels, (const int(*)[NCCL_NUM_PROTOCOLS])supported, &c));
  MK_INFO(NCCL_TUNING, "%s: %zu Bytes -> Algo %s proto %s, predicted %.1f us (rank %d, opCount %llu)",
          tune_func_name(func), bytes, tune_algo_name(c.algo), tune_proto_name(c.proto), (double)c.predictedUs,
          comm->rank, (unsigned long long)comm->dp.opCount);
  *algo = c.algo;
  *proto = c.proto;
  return ncclSuccess;
}
