/* Creating communicators: ncclGetUniqueId, ncclCommInitRank(Config),
 * ncclCommInitRankScalable, ncclCommInitAll. */
#include <stdlib.h>
#include <unistd.h>

#include "api/api.h"
#include "base/err.h"
#include "base/param.h"
#include "comm/comm.h"

MK_API(ncclResult_t, GetUniqueId, ncclUniqueId* uniqueId) {
  if (!uniqueId) return MK_FAIL(ncclInvalidArgument, "ncclGetUniqueId: uniqueId is NULL");
  bootstrap_root_reap();
  bootstrap_handle_t h;
  MK_CHECK(bootstrap_handle_create(&h, 1));
  bootstrap_handle_to_id(&h, uniqueId);
  return ncclSuccess;
}

static ncclResult_t api_init_args(ncclComm_t* newcomm, int nranks, int rank, const char* fn) {
  if (!newcomm) return MK_FAIL(ncclInvalidArgument, "%s: newcomm is NULL", fn);
  if (nranks < 1) return MK_FAIL(ncclInvalidArgument, "%s: invalid nranks %d", fn, nranks);
  if (rank < 0 || rank >= nranks) return MK_FAIL(ncclInvalidArgument, "%s: invalid rank %d of %d", fn, rank, nranks);
  return ncclSuccess;
}

MK_API(ncclResult_t, CommInitRankConfig, ncclComm_t* newcomm, int nranks, ncclUniqueId commId, int rank,
       ncclConfig_t* config) {
  const char* fn = "ncclCommInitRankConfig";
  MK_CHECK(api_init_args(newcomm, nranks, rank, fn));
  bootstrap_handle_t h;
  MK_CHECK(bootstrap_handle_from_id(&commId, &h));
  return comm_create(newcomm, nranks, &h, 1, rank, comm_cuda_device_current(), config, NULL, fn);
}

MK_API(ncclResult_t, CommInitRank, ncclComm_t* newcomm, int nranks, ncclUniqueId commId, int rank) {
  return pncclCommInitRankConfig(newcomm, nranks, commId, rank, NULL);
}

MK_API(ncclResult_t, CommInitRankScalable, ncclComm_t* newcomm, int nranks, int myrank, int nId,
       ncclUniqueId* commIds, ncclConfig_t* config) {
  const char* fn = "ncclCommInitRankScalable";
  MK_CHECK(api_init_args(newcomm, nranks, myrank, fn));
  if (!commIds) return MK_FAIL(ncclInvalidArgument, "%s: commIds is NULL", fn);
  if (nId < 1 || nId > nranks)
    return MK_FAIL(ncclInvalidArgument, "%s: nId %d is not in [1, nranks=%d]", fn, nId, nranks);
  const char* env = param_NCCL_COMM_ID();
  if (nId > 1 && env && *env)
    return MK_FAIL(ncclInvalidUsage, "%s: NCCL_COMM_ID names one root; it cannot be used with %d unique ids", fn, nId);
  bootstrap_handle_t* hs = malloc(sizeof(*hs) * (size_t)nId);
  if (!hs) return MK_FAIL(ncclSystemError, "%s: out of memory", fn);
  ncclResult_t res = ncclSuccess;
  for (int i = 0; i < nId && res == ncclSuccess; i++) res = bootstrap_handle_from_id(&commIds[i], &hs[i]);
  if (res == ncclSuccess) res = comm_create(newcomm, nranks, hs, nId, myrank, comm_cuda_device_current(), config, NULL, fn);
  free(hs);
  return res;
}

/* ---- ncclCommInitAll: ndev ranks in this process, initialized together ---------------------- */

static ncclResult_t api_init_all_devs(int ndev, const int* devlist, int* devs) {
  int count = comm_cuda_device_count();
  for (int i = 0; i < ndev; i++) {
    int dev = devlist ? devlist[i] : i;
    if (devlist && (dev < 0 || (count > 0 && dev >= count)))
      return MK_FAIL(ncclInvalidArgument, "ncclCommInitAll: invalid device %d in devlist (%d devices)", dev, count);
    if (!devlist && count > 0 && dev >= count)
      return MK_FAIL(ncclInvalidArgument, "ncclCommInitAll: %d ranks requested, %d devices", ndev, count);
    for (int j = 0; devlist && j < i && !param_MKCCL_ALLOW_SAME_GPU(); j++)
      if (devlist[j] == dev) return MK_FAIL(ncclInvalidUsage, "ncclCommInitAll: duplicate device %d in devlist", dev);
    devs[i] = count > 0 ? dev : -1; /* no CUDA driver: host ranks */
  }
  return ncclSuccess;
}

/* Aborts and frees the communicators launched so far. */
static void api_init_all_unwind(struct ncclComm** comms, int n) {
  for (int i = 0; i < n; i++) __atomic_store_n(comms[i]->abortFlag, 1, __ATOMIC_RELEASE);
  for (int i = 0; i < n; i++) comm_abort_free(comms[i], param_MKCCL_ABORT_WAIT_MS());
}

MK_API(ncclResult_t, CommInitAll, ncclComm_t* comms, int ndev, const int* devlist) {
  const char* fn = "ncclCommInitAll";
  if (!comms) return MK_FAIL(ncclInvalidArgument, "%s: comms is NULL", fn);
  if (ndev < 1) return MK_FAIL(ncclInvalidArgument, "%s: invalid device count %d", fn, ndev);
  ncclResult_t res = ncclSuccess;
  int* devs = malloc(sizeof(int) * (size_t)ndev);
  struct ncclComm** tmp = calloc((size_t)ndev, sizeof(*tmp));
  int launched = 0;
  bootstrap_handle_t h;
  if (!devs || !tmp) {
    res = MK_FAIL(ncclSystemError, "%s: out of memory", fn);
    goto out;
  }
  MK_CHECK_GOTO(api_init_all_devs(ndev, devlist, devs), res, out);
  bootstrap_root_reap();
  MK_CHECK_GOTO(bootstrap_handle_create(&h, 1), res, out);
  /* Every rank waits for the others: each inits on its own thread. */
  for (; launched < ndev; launched++) {
    MK_CHECK_GOTO(comm_alloc(ndev, launched, &h, 1, devs[launched], NULL, NULL, fn, &tmp[launched]), res, fail);
    res = comm_init_launch(tmp[launched], 1);
    if (res != ncclInProgress) {
      launched++;
      goto fail;
    }
  }
  res = ncclSuccess;
  for (int i = 0; i < ndev; i++) {
    ncclResult_t r;
    while ((r = comm_async_result(tmp[i])) == ncclInProgress) usleep(1000);
    if (r != ncclSuccess && res == ncclSuccess) res = r;
    if (r != ncclSuccess) break; /* the others end by the abort in unwind */
  }
  if (res != ncclSuccess) goto fail;
  for (int i = 0; i < ndev; i++) comms[i] = tmp[i];
  goto out;
fail:
  api_init_all_unwind(tmp, launched);
  bootstrap_root_finish(&h, 1);
out:
  free(devs);
  free(tmp);
  return res;
}
