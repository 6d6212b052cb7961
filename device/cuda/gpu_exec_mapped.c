/* Host memory the kernels see: the communicator's abort flag (registered
 * and mapped) and the channels' status rows, which the watchdog reads and
 * in which a kernel marks a wait that timed out. */
#include <string.h>

#include "base/err.h"
#include "comm/comm.h"
#include "device/cuda/gpu_exec_internal.h"

#define GPU_STATUS_BYTES (sizeof(uint64_t) * MK_DEV_MAX_CHANNELS * MK_DEV_STATUS_WORDS)

ncclResult_t gpu_exec_mapped_open(gpu_exec_t* ex, struct ncclComm* comm) {
  const cuda_gpu_t* g = ex->g;
  void* flag = (void*)comm->abortFlag;
  ncclResult_t res;
  /* The abort flag, mapped for the kernels (its own page, see comm_alloc). */
  cu_result_t r = g->mem_host_register(flag, 4096, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
  if (r != CUDA_DRV_SUCCESS && r != CUDA_DRV_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
    return CU_FAIL("cuMemHostRegister (abort flag)", r);
  cu_deviceptr_t abortDev;
  if ((r = g->mem_host_get_device_pointer(&abortDev, flag, 0)) != CUDA_DRV_SUCCESS) {
    res = CU_FAIL("cuMemHostGetDevicePointer (abort flag)", r);
    goto fail;
  }
  r = g->mem_host_alloc((void**)&ex->status, GPU_STATUS_BYTES, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  if (r != CUDA_DRV_SUCCESS) {
    res = CU_FAIL("cuMemHostAlloc (status)", r);
    goto fail;
  }
  memset((void*)ex->status, 0, GPU_STATUS_BYTES);
  ex->abortDev = (volatile uint32_t*)(uintptr_t)abortDev;
  ex->abortHost = flag;
  return ncclSuccess;
fail:
  g->mem_host_unregister(flag);
  return res;
}

void gpu_exec_mapped_close(gpu_exec_t* ex) {
  ex->g->mem_free_host((void*)ex->status);
  ex->g->mem_host_unregister(ex->abortHost);
}

int gpu_exec_timed_out(gpu_exec_t* ex) {
  for (int c = 0; ex && c < MK_DEV_MAX_CHANNELS; c++)
    if (__atomic_load_n(&ex->status[c * MK_DEV_STATUS_WORDS + MK_STATUS_TIMEDOUT], __ATOMIC_ACQUIRE)) return 1;
  return 0;
}
