/* The device communicator (dev_comm.h) and its host copy: every channel's
 * connection table and ring order in device memory, sized by the
 * communicator, and the fields the kernels read, copied there at init. */
#include <stdlib.h>

#include "base/err.h"
#include "base/param.h"
#include "comm/comm.h"
#include "device/cuda/gpu_exec_internal.h"

ncclResult_t gpu_exec_devcomm_alloc(gpu_exec_t* ex, struct ncclComm* comm) {
  const cuda_gpu_t* g = ex->g;
  /* Every channel's connections, kind by kind, peer by peer; then every
   * channel's ring order. */
  size_t nConns = (size_t)MK_DEV_MAX_CHANNELS * MK_DEV_CONN_KINDS * (size_t)comm->nRanks;
  size_t nRing = (size_t)MK_DEV_MAX_CHANNELS * (size_t)comm->nRanks;
  ex->connsBytes = nConns * sizeof(mk_dev_conn_t);
  ncclResult_t res = ncclSuccess;
  cu_deviceptr_t d, dc;
  cu_result_t r = g->mem_alloc(&d, sizeof(mk_dev_comm_t));
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuMemAlloc (device comm)", r);
  ex->devComm = (mk_dev_comm_t*)(uintptr_t)d;
  if (!(ex->hostComm = calloc(1, sizeof(mk_dev_comm_t)))) {
    res = MK_FAIL(ncclSystemError, "out of memory");
  } else if ((r = g->mem_alloc(&dc, ex->connsBytes + nRing * sizeof(int32_t))) != CUDA_DRV_SUCCESS) {
    res = CU_FAIL("cuMemAlloc (device connections)", r);
  } else {
    ex->devConns = (mk_dev_conn_t*)(uintptr_t)dc;
    ex->devRingRanks = (int32_t*)((char*)ex->devConns + ex->connsBytes);
    ex->hostConns = calloc(nConns, sizeof(mk_dev_conn_t));
    ex->hostRingRanks = calloc(nRing, sizeof(int32_t));
    ex->synced = calloc(nConns, 1);
    if (!ex->hostConns || !ex->synced || !ex->hostRingRanks) res = MK_FAIL(ncclSystemError, "out of memory");
  }
  if (res != ncclSuccess) {
    gpu_exec_devcomm_free(ex);
    return res;
  }
  for (int c = 0; c < MK_DEV_MAX_CHANNELS; c++) {
    ex->hostComm->channels[c].conns = ex->devConns + (size_t)c * MK_DEV_CONN_KINDS * (size_t)comm->nRanks;
    ex->hostComm->channels[c].ringRanks = ex->devRingRanks + (size_t)c * (size_t)comm->nRanks;
  }
  return ncclSuccess;
}

/* What gpu_exec_devcomm_alloc made, also when it made only part of it. */
void gpu_exec_devcomm_free(gpu_exec_t* ex) {
  free(ex->synced);
  free(ex->hostRingRanks);
  free(ex->hostConns);
  if (ex->devConns) ex->g->mem_free((cu_deviceptr_t)(uintptr_t)ex->devConns);
  free(ex->hostComm);
  ex->g->mem_free((cu_deviceptr_t)(uintptr_t)ex->devComm);
}

ncclResult_t gpu_exec_devcomm_upload(gpu_exec_t* ex, struct ncclComm* comm) {
  const cuda_gpu_t* g = ex->g;
  mk_dev_comm_t* h = ex->hostComm;
  h->rank = comm->rank;
  h->nRanks = comm->nRanks;
  h->abortFlag = ex->abortDev;
  h->status = ex->status;
  int64_t timeoutSec = param_MKCCL_TIMEOUT();
  h->timeoutNs = timeoutSec > 0 ? (uint64_t)timeoutSec * 1000000000ull : 0;
  h->traceStatus = param_MKCCL_GPU_WATCHDOG() > 0 || param_MKCCL_GPU_PROBE() != 0;
  cu_result_t r = g->memcpy_async((cu_deviceptr_t)(uintptr_t)ex->devComm, (cu_deviceptr_t)(uintptr_t)h,
                                  sizeof(mk_dev_comm_t), ex->initStream);
  if (r == CUDA_DRV_SUCCESS) /* zeros: no connection yet */
    r = g->memcpy_async((cu_deviceptr_t)(uintptr_t)ex->devConns, (cu_deviceptr_t)(uintptr_t)ex->hostConns,
                        ex->connsBytes, ex->initStream);
  if (r == CUDA_DRV_SUCCESS) r = g->stream_synchronize(ex->initStream);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuMemcpyAsync (device comm)", r);
  return ncclSuccess;
}
