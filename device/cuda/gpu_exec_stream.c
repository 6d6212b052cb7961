/* The executor's streams and the order between streams: its private set-up
 * stream, joins of a group's streams, host functions and copies queued on
 * the user's streams. */
#include "base/err.h"
#include "device/cuda/gpu_exec_internal.h"

ncclResult_t gpu_exec_stream_open(gpu_exec_t* ex, struct ncclComm* comm) {
  (void)comm;
  cu_result_t r = ex->g->stream_create(&ex->initStream, CU_STREAM_NON_BLOCKING);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuStreamCreate (set-up stream)", r);
  return ncclSuccess;
}

void gpu_exec_stream_close(gpu_exec_t* ex) {
  if (ex->joinEvent) ex->g->event_destroy(ex->joinEvent);
  ex->g->stream_destroy(ex->initStream);
}

ncclResult_t gpu_exec_host_call(gpu_exec_t* ex, void* stream, void (*fn)(void*), void* arg) {
  cu_result_t r = ex->g->launch_host_func((cu_stream_t)stream, fn, arg);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuLaunchHostFunc", r);
  return ncclSuccess;
}

/* One event serves every join: a wait takes the record made before it. */
ncclResult_t gpu_exec_stream_join(gpu_exec_t* ex, void* waiter, void* waited) {
  const cuda_gpu_t* g = ex->g;
  cu_result_t r;
  if (!ex->joinEvent && (r = g->event_create(&ex->joinEvent, CU_EVENT_DISABLE_TIMING)) != CUDA_DRV_SUCCESS) {
    ex->joinEvent = NULL;
    return CU_FAIL("cuEventCreate (joining a group's streams)", r);
  }
  if ((r = g->event_record(ex->joinEvent, (cu_stream_t)waited)) != CUDA_DRV_SUCCESS)
    return CU_FAIL("cuEventRecord (joining a group's streams)", r);
  if ((r = g->stream_wait_event((cu_stream_t)waiter, ex->joinEvent, 0)) != CUDA_DRV_SUCCESS)
    return CU_FAIL("cuStreamWaitEvent (joining a group's streams)", r);
  return ncclSuccess;
}

ncclResult_t gpu_exec_copy(gpu_exec_t* ex, void* dst, const void* src, size_t bytes, void* stream) {
  cu_result_t r = ex->g->memcpy_async((cu_deviceptr_t)(uintptr_t)dst, (cu_deviceptr_t)(uintptr_t)src, bytes,
                                      (cu_stream_t)stream);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuMemcpyAsync (one-rank collective)", r);
  return ncclSuccess;
}
