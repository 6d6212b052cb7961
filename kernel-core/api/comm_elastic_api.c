/* NCCL 2.29/2.30's communicators that change: new ranks joining a live one
 * (ncclCommGetUniqueId, ncclCommGrow), and one that gives back its memory
 * for a while (ncclCommSuspend/Resume): not implemented yet. And what a
 * communicator holds (ncclCommMemStats). */
#include "api/api.h"
#include "base/err.h"
#include "comm/comm.h"

#define ELASTIC "NCCL 2.30's communicator API"

MK_API(ncclResult_t, CommGetUniqueId, ncclComm_t comm, ncclUniqueId* uniqueId) {
  (void)comm, (void)uniqueId;
  return api_not_implemented("ncclCommGetUniqueId", ELASTIC);
}

MK_API(ncclResult_t, CommGrow, ncclComm_t comm, int nRanks, const ncclUniqueId* uniqueId, int rank,
       ncclComm_t* newcomm, ncclConfig_t* config) {
  (void)comm, (void)nRanks, (void)uniqueId, (void)rank, (void)newcomm, (void)config;
  return api_not_implemented("ncclCommGrow", ELASTIC);
}

MK_API(ncclResult_t, CommSuspend, ncclComm_t comm, int flags) {
  (void)comm, (void)flags;
  return api_not_implemented("ncclCommSuspend", ELASTIC);
}

MK_API(ncclResult_t, CommResume, ncclComm_t comm) {
  (void)comm;
  return api_not_implemented("ncclCommResume", ELASTIC);
}

/* The GPU memory counted is what the transports hold (comm.h's
 * gpuMemBytes): all of it persists, since nothing can be suspended yet.
 * A host communicator holds none. */
MK_API(ncclResult_t, CommMemStats, ncclComm_t comm, ncclCommMemStat_t stat, uint64_t* value) {
  MK_CHECK(comm_check(comm, "ncclCommMemStats"));
  if (!value) return MK_FAIL(ncclInvalidArgument, "ncclCommMemStats: value is NULL");
  MK_CHECK(comm_ensure_ready(comm, "ncclCommMemStats"));
  uint64_t held = __atomic_load_n(&comm->gpuMemBytes, __ATOMIC_RELAXED);
  switch (stat) {
    case ncclStatGpuMemTotal:
    case ncclStatGpuMemPersist: *value = held; return ncclSuccess;
    case ncclStatGpuMemSuspend:
    case ncclStatGpuMemSuspended: *value = 0; return ncclSuccess;
    default: return MK_FAIL(ncclInvalidArgument, "ncclCommMemStats: %d is no ncclCommMemStat_t", (int)stat);
  }
}
