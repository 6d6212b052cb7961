/* The communicator's CUDA context on the calling thread, and what the
 * driver says of a pointer: calls that need no executor. */
#include "base/err.h"
#include "comm/comm.h"
#include "device/cuda/gpu_exec_internal.h"

/* The comm holds its device's primary context from its first bind until
 * gpu_exec_unbind: a context nobody holds (the application may not have
 * touched the device yet) would be destroyed under us. */
ncclResult_t gpu_exec_bind(struct ncclComm* comm) {
  const cuda_gpu_t* g = cuda_gpu();
  if (!g) return ncclInvalidUsage;
  if (!comm->dp.exec.gpuCtx) {
    cu_context_t ctx;
    CU_CHECK(g->primary_ctx_retain(&ctx, comm->cudaDev));
    comm->dp.exec.gpuCtx = ctx;
  }
  CU_CHECK(g->ctx_set_current((cu_context_t)comm->dp.exec.gpuCtx));
  return ncclSuccess;
}

void gpu_exec_unbind(struct ncclComm* comm) {
  const cuda_gpu_t* g = cuda_gpu();
  if (g && comm->dp.exec.gpuCtx) g->primary_ctx_release(comm->cudaDev);
  comm->dp.exec.gpuCtx = NULL;
}

ncclResult_t gpu_exec_ctx_save(void** ctx) {
  const cuda_driver_t* d = cuda_driver();
  if (!d) return MK_FAIL(ncclInvalidUsage, "GPU communicator without a CUDA driver");
  cu_context_t c = NULL;
  CU_CHECK(d->ctx_get_current(&c));
  *ctx = c;
  return ncclSuccess;
}

void gpu_exec_ctx_restore(void* ctx) {
  const cuda_gpu_t* g = cuda_gpu();
  if (g && ctx) g->ctx_set_current((cu_context_t)ctx);
}

int gpu_exec_pointer_ok(const void* ptr) {
  const cuda_driver_t* d = cuda_driver();
  if (!d || !ptr) return 0;
  unsigned int type = 0;
  if (d->pointer_get_attribute(&type, CUDA_DRV_POINTER_ATTR_MEMORY_TYPE, (cu_deviceptr_t)(uintptr_t)ptr) !=
      CUDA_DRV_SUCCESS)
    return 0; /* unregistered host memory */
  return 1;   /* device, managed, or registered/pinned host memory */
}
