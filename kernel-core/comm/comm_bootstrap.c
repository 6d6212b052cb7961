/* Stage "bootstrap": the communicator's ring and point-to-point messages,
 * and the root it may host; stage "ready": a last barrier, so no rank
 * reports success before every rank is through every stage. */
#include <stdlib.h>

#include "base/err.h"
#include "base/param.h"
#include "comm/comm.h"

ncclResult_t comm_bootstrap_stage_init(struct ncclComm* comm) {
  /* NCCL_COMM_ID: no root runs yet; rank 0 starts it at the named address. */
  if (comm->rank == 0 && comm->nHandles == 1 && bootstrap_handle_is_env(&comm->handles[0])) {
    bootstrap_handle_t h = comm->handles[0];
    MK_CHECK(bootstrap_root_start(&h));
  }
  ncclResult_t res =
      bootstrap_init(comm->handles, comm->nHandles, comm->rank, comm->nRanks, comm->abortFlag, &comm->bootstrap);
  if (res != ncclSuccess) {
    for (int i = 0; i < comm->nHandles; i++) bootstrap_root_finish(&comm->handles[i], 1);
  }
  return res;
}

void comm_bootstrap_stage_destroy(struct ncclComm* comm) {
  bootstrap_destroy(comm->bootstrap);
  comm->bootstrap = NULL;
  /* A root this process hosts for this comm: done once every rank was
   * answered, which a ready comm guarantees; otherwise stop it. */
  int stop = comm_state_get(comm) != COMM_STATE_READY && comm_state_get(comm) != COMM_STATE_FINALIZED;
  for (int i = 0; i < comm->nHandles; i++) bootstrap_root_finish(&comm->handles[i], stop);
}

ncclResult_t comm_ready_stage_init(struct ncclComm* comm) { return bootstrap_barrier(comm->bootstrap); }

ncclResult_t comm_local_allgather(struct ncclComm* comm, void* data, size_t size) {
  return bootstrap_subset_allgather(comm->bootstrap, comm->localRankToRank, comm->localRanks, comm->localRank, data,
                                    size);
}

ncclResult_t comm_local_barrier(struct ncclComm* comm) {
  return bootstrap_subset_barrier(comm->bootstrap, comm->localRankToRank, comm->localRanks, comm->localRank);
}

ncclResult_t comm_all_agree(struct ncclComm* comm, int mine, int* all, const char* what) {
  int* each = calloc((size_t)comm->nRanks, sizeof(int));
  if (!each) return MK_FAIL(ncclSystemError, "Rank %d: out of memory (agreeing on %s)", comm->rank, what);
  each[comm->rank] = mine != 0;
  ncclResult_t res = bootstrap_allgather(comm->bootstrap, each, sizeof(int));
  if (res == ncclSuccess) {
    int v = 1;
    for (int r = 0; r < comm->nRanks; r++) v &= each[r];
    *all = v;
  } else {
    res = MK_FAIL(res, "Rank %d: exchanging %s failed", comm->rank, what);
  }
  free(each);
  return res;
}
