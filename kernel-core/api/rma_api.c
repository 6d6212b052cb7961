/* NCCL 2.29/2.30's one-sided operations on windows: a put that signals the
 * peer, a signal alone, and a wait for signals. Not implemented yet. */
#include "api/api.h"

#define RMA "NCCL 2.30's one-sided API"

MK_API(ncclResult_t, PutSignal, const void* localbuff, size_t count, ncclDataType_t datatype, int peer,
       ncclWindow_t peerWin, size_t peerWinOffset, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,
       cudaStream_t stream) {
  (void)localbuff, (void)count, (void)datatype, (void)peer, (void)peerWin, (void)peerWinOffset, (void)sigIdx,
      (void)ctx, (void)flags, (void)comm, (void)stream;
  return api_not_implemented("ncclPutSignal", RMA);
}

MK_API(ncclResult_t, Signal, int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,
       cudaStream_t stream) {
  (void)peer, (void)sigIdx, (void)ctx, (void)flags, (void)comm, (void)stream;
  return api_not_implemented("ncclSignal", RMA);
}

MK_API(ncclResult_t, WaitSignal, int nDesc, ncclWaitSignalDesc_t* signalDescs, ncclComm_t comm,
       cudaStream_t stream) {
  (void)nDesc, (void)signalDescs, (void)comm, (void)stream;
  return api_not_implemented("ncclWaitSignal", RMA);
}
