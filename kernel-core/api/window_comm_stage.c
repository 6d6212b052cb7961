/* The "windows" stage: a communicator ended with windows still registered
 * (ncclCommWindowRegister without Deregister, ncclDevCommCreate without
 * Destroy, the symmetric collectives' flags) gives them all back here,
 * before its data path goes. Left alone they would keep the peers' memory
 * mapped into this process after the peers freed it, so a later mapping of
 * the same address (a new communicator's IPC buffer) would fail, and their
 * records would name a freed communicator. */
#include "api/devcomm.h"
#include "api/window.h"
#include "base/err.h"
#include "comm/comm.h"

ncclResult_t comm_windows_stage_init(struct ncclComm* comm) {
  (void)comm; /* windows come later, one registration at a time */
  return ncclSuccess;
}

void comm_windows_stage_destroy(struct ncclComm* comm) {
  int left = 0;
  api_window_t* w;
  while ((w = api_window_next_of(comm)) != NULL) {
    (void)api_devcomm_gin_stop(comm, w); /* a failure was logged where it was decided; the rest still goes */
    left += !w->internal;
    api_window_destroy(w);
  }
  comm->symmRes = NULL;
  comm->symmWindows = 0;
  if (left) MK_INFO(NCCL_INIT, "comm %p rank %d: %d window(s) still registered at its end were deregistered",
                    (void*)comm, comm->rank, left);
}
