/* Questions to a communicator: count, rank, device, async error. */
#include "api/api.h"
#include "base/err.h"
#include "comm/comm.h"

MK_API(ncclResult_t, CommCount, const ncclComm_t comm, int* count) {
  MK_CHECK(comm_check(comm, "ncclCommCount"));
  if (!count) return MK_FAIL(ncclInvalidArgument, "ncclCommCount: count is NULL");
  MK_CHECK(comm_ensure_ready(comm, "ncclCommCount"));
  *count = comm->nRanks;
  return ncclSuccess;
}

MK_API(ncclResult_t, CommUserRank, const ncclComm_t comm, int* rank) {
  MK_CHECK(comm_check(comm, "ncclCommUserRank"));
  if (!rank) return MK_FAIL(ncclInvalidArgument, "ncclCommUserRank: rank is NULL");
  MK_CHECK(comm_ensure_ready(comm, "ncclCommUserRank"));
  *rank = comm->rank;
  return ncclSuccess;
}

MK_API(ncclResult_t, CommCuDevice, const ncclComm_t comm, int* device) {
  MK_CHECK(comm_check(comm, "ncclCommCuDevice"));
  if (!device) return MK_FAIL(ncclInvalidArgument, "ncclCommCuDevice: device is NULL");
  MK_CHECK(comm_ensure_ready(comm, "ncclCommCuDevice"));
  *device = comm->cudaDev;
  return ncclSuccess;
}

MK_API(ncclResult_t, CommGetAsyncError, ncclComm_t comm, ncclResult_t* asyncError) {
  MK_CHECK(comm_check(comm, "ncclCommGetAsyncError"));
  if (!asyncError) return MK_FAIL(ncclInvalidArgument, "ncclCommGetAsyncError: asyncError is NULL");
  if (__atomic_load_n(&comm->asyncResult, __ATOMIC_ACQUIRE) != ncclInProgress) comm_poll_device_error(comm);
  *asyncError = comm_async_result(comm);
  return ncclSuccess;
}
