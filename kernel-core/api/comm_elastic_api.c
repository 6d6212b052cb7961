/* NCCL 2.29/2.30's communicators that change: new ranks joining a live one
 * (ncclCommGetUniqueId, ncclCommGrow), and one that gives back its memory
 * for a while (ncclCommSuspend/Resume, ncclCommMemStats). Not implemented
 * yet. */
#include "api/api.h"

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

MK_API(ncclResult_t, CommMemStats, ncclComm_t comm, ncclCommMemStat_t stat, uint64_t* value) {
  (void)comm, (void)stat, (void)value;
  return api_not_implemented("ncclCommMemStats", ELASTIC);
}
