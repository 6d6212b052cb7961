/* Ending communicators: ncclCommFinalize, ncclCommDestroy, ncclCommAbort,
 * and ncclCommSplit (which makes one from another). */
#include "api/api.h"
#include "base/err.h"
#include "base/param.h"
#include "comm/comm.h"
#include "group/group.h"

MK_API(ncclResult_t, CommFinalize, ncclComm_t comm) {
  MK_CHECK(comm_check(comm, "ncclCommFinalize"));
  MK_CHECK(comm_ensure_ready(comm, "ncclCommFinalize"));
  ncclResult_t res = comm_stages_finalize(comm);
  comm->finalizeCalled = 1;
  __atomic_store_n(&comm->state, COMM_STATE_FINALIZED, __ATOMIC_RELEASE);
  return res;
}

MK_API(ncclResult_t, CommDestroy, ncclComm_t comm) {
  if (!comm) return ncclSuccess; /* as NCCL */
  MK_CHECK(comm_check(comm, "ncclCommDestroy"));
  if (group_comm_drop(comm))
    MK_WARN("ncclCommDestroy: comm %p had operations queued in this thread's open group: dropped", (void*)comm);
  comm_init_thread_reap(comm, 1); /* a non-blocking init still running: bounded by its timeout */
  ncclResult_t res = ncclSuccess;
  if (comm_state_get(comm) == COMM_STATE_READY && !comm->finalizeCalled) res = comm_stages_finalize(comm);
  int rank = comm->rank, nRanks = comm->nRanks;
  comm_stages_destroy(comm);
  comm_free(comm);
  MK_INFO(NCCL_INIT, "comm %p rank %d nRanks %d - Destroy COMPLETE", (void*)comm, rank, nRanks);
  return res;
}

MK_API(ncclResult_t, CommAbort, ncclComm_t comm) {
  if (!comm) return ncclSuccess;
  MK_CHECK(comm_check(comm, "ncclCommAbort"));
  /* Left to the threads still inside by an earlier abort: not ours to free. */
  if (comm_state_get(comm) == COMM_STATE_ABORTED)
    return MK_FAIL(ncclInvalidUsage, "ncclCommAbort: comm %p was aborted already", (void*)comm);
  if (group_comm_drop(comm)) /* this thread's open group: nothing to wait for */
    MK_INFO(NCCL_INIT, "ncclCommAbort: comm %p: the operations this thread's open group queued on it are dropped",
            (void*)comm);
  __atomic_store_n(comm->abortFlag, 1, __ATOMIC_RELEASE); /* every wait of every thread of this comm ends */
  comm_abort_free(comm, param_MKCCL_ABORT_WAIT_MS());
  return ncclSuccess;
}

MK_API(ncclResult_t, CommSplit, ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  const char* fn = "ncclCommSplit";
  MK_CHECK(comm_check(comm, fn));
  if (!newcomm) return MK_FAIL(ncclInvalidArgument, "%s: newcomm is NULL", fn);
  if (color < 0 && color != NCCL_SPLIT_NOCOLOR)
    return MK_FAIL(ncclInvalidArgument, "%s: color %d must be >= 0 or NCCL_SPLIT_NOCOLOR", fn, color);
  MK_CHECK(comm_ensure_ready(comm, fn));
  comm_busy_enter(comm); /* an abort on another thread waits for the split (bounded) */
  ncclResult_t res = comm_split(comm, color, key, config, newcomm, fn);
  comm_busy_leave(comm);
  return res;
}

MK_API(ncclResult_t, CommShrink, ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
       ncclConfig_t* config, int shrinkFlags) {
  const char* fn = "ncclCommShrink";
  MK_CHECK(comm_check(comm, fn));
  if (!newcomm) return MK_FAIL(ncclInvalidArgument, "%s: newcomm is NULL", fn);
  if (shrinkFlags & ~(NCCL_SHRINK_DEFAULT | NCCL_SHRINK_ABORT))
    return MK_FAIL(ncclInvalidArgument, "%s: unknown flags 0x%x", fn, (unsigned)shrinkFlags);
  if (excludeRanksCount < 0 || excludeRanksCount >= comm->nRanks || (excludeRanksCount > 0 && !excludeRanksList))
    return MK_FAIL(ncclInvalidArgument, "%s: %d excluded rank(s)%s of %d", fn, excludeRanksCount,
                   excludeRanksCount > 0 && !excludeRanksList ? " but excludeRanksList is NULL" : "", comm->nRanks);
  for (int i = 0; i < excludeRanksCount; i++) {
    int r = excludeRanksList[i];
    if (r < 0 || r >= comm->nRanks)
      return MK_FAIL(ncclInvalidArgument, "%s: excluded rank %d is out of range [0, %d)", fn, r, comm->nRanks);
    if (r == comm->rank)
      return MK_FAIL(ncclInvalidArgument, "%s: rank %d excludes itself (excluded ranks do not call it)", fn, r);
    for (int j = 0; j < i; j++)
      if (excludeRanksList[j] == r) return MK_FAIL(ncclInvalidArgument, "%s: rank %d is excluded twice", fn, r);
  }
  MK_CHECK(comm_ensure_ready(comm, fn));
  comm_busy_enter(comm); /* as for a split */
  ncclResult_t res = comm_shrink(comm, excludeRanksList, excludeRanksCount, config, shrinkFlags, newcomm, fn);
  comm_busy_leave(comm);
  return res;
}

MK_API(ncclResult_t, CommRevoke, ncclComm_t comm, int revokeFlags) {
  const char* fn = "ncclCommRevoke";
  MK_CHECK(comm_check(comm, fn));
  if (revokeFlags != NCCL_REVOKE_DEFAULT)
    return MK_FAIL(ncclInvalidArgument, "%s: unknown flags 0x%x (only NCCL_REVOKE_DEFAULT)", fn, (unsigned)revokeFlags);
  MK_CHECK(comm_ensure_ready(comm, fn));
  return comm_revoke(comm, 0);
}
