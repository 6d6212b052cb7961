/* Allocate + launch, with the output rules of the API: a blocking init
 * sets *out only on success (a failed comm is freed); a non-blocking one
 * sets *out at once and answers ncclInProgress. */
#include "base/err.h"
#include "comm/comm.h"

ncclResult_t comm_create(struct ncclComm** out, int nRanks, const bootstrap_handle_t* handles, int nHandles, int rank,
                         int cudaDev, const ncclConfig_t* config, const ncclConfig_t* inherit, const char* fn) {
  struct ncclComm* comm = NULL;
  MK_CHECK(comm_alloc(nRanks, rank, handles, nHandles, cudaDev, config, inherit, fn, &comm));
  int async = !comm->config.blocking;
  ncclResult_t res = comm_init_launch(comm, async);
  if (res != ncclSuccess && res != ncclInProgress) {
    comm_free(comm); /* the stages were undone by the failed init */
    return res;
  }
  *out = comm;
  return res;
}
