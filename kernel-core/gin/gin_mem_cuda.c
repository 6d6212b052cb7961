/* A GPU's memory for an engine: the queues, consumer indices, signals,
 * counters and staging are host memory the GPU maps (the thread polls and
 * adds to them without a copy); producer indices, contexts and signal
 * shadows are device memory. Copies run on a non-blocking stream of the
 * engine's own, so they never wait behind the kernels that wait for them. */
#include <stdint.h>
#include <stdlib.h>

#include "base/err.h"
#include "cuda/gpu.h"
#include "gin/gin_mem.h"

typedef struct {
  const cuda_gpu_t* g;
  cu_context_t ctx;
  cu_stream_t stream;
} cuda_mem_t;

static ncclResult_t cuda_shared_alloc(void* c, size_t bytes, void** host, void** dev) {
  cuda_mem_t* m = c;
  void* p = NULL;
  cu_deviceptr_t d = 0;
  cu_result_t r = m->g->mem_host_alloc(&p, bytes ? bytes : 1, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuMemHostAlloc (GIN queues and signals)", r);
  r = m->g->mem_host_get_device_pointer(&d, p, 0);
  if (r != CUDA_DRV_SUCCESS) {
    m->g->mem_free_host(p);
    return CU_FAIL("cuMemHostGetDevicePointer (GIN)", r);
  }
  for (size_t i = 0; i < bytes; i++) ((volatile char*)p)[i] = 0;
  *host = p;
  *dev = (void*)(uintptr_t)d;
  return ncclSuccess;
}

static void cuda_shared_free(void* c, void* host) { ((cuda_mem_t*)c)->g->mem_free_host(host); }

static ncclResult_t cuda_dev_alloc(void* c, size_t bytes, void** dev) {
  cuda_mem_t* m = c;
  cu_deviceptr_t d = 0;
  cu_result_t r = m->g->mem_alloc(&d, bytes ? bytes : 1);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuMemAlloc (GIN)", r);
  r = m->g->memset_d8_async(d, 0, bytes, m->stream);
  if (r == CUDA_DRV_SUCCESS) r = m->g->stream_synchronize(m->stream);
  if (r != CUDA_DRV_SUCCESS) {
    m->g->mem_free(d);
    return CU_FAIL("cuMemsetD8Async (GIN)", r);
  }
  *dev = (void*)(uintptr_t)d;
  return ncclSuccess;
}

static void cuda_dev_free(void* c, void* dev) { ((cuda_mem_t*)c)->g->mem_free((cu_deviceptr_t)(uintptr_t)dev); }

static ncclResult_t cuda_copy(void* c, void* dst, const void* src, size_t bytes) {
  cuda_mem_t* m = c;
  cu_result_t r = m->g->memcpy_async((cu_deviceptr_t)(uintptr_t)dst, (cu_deviceptr_t)(uintptr_t)src, bytes, m->stream);
  if (r == CUDA_DRV_SUCCESS) r = m->g->stream_synchronize(m->stream);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuMemcpyAsync (GIN put)", r);
  return ncclSuccess;
}

static ncclResult_t cuda_thread_start(void* c) {
  cuda_mem_t* m = c;
  cu_result_t r = m->g->ctx_set_current(m->ctx);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuCtxSetCurrent (GIN proxy thread)", r);
  return ncclSuccess;
}

ncclResult_t gin_mem_cuda_open(void* gpuCtx, gin_mem_ops_t* out) {
  const cuda_gpu_t* g = cuda_gpu();
  if (!g) return MK_FAIL(ncclSystemError, "GIN: the CUDA driver's entry points are not loaded");
  cuda_mem_t* m = calloc(1, sizeof(*m));
  if (!m) return MK_FAIL(ncclSystemError, "GIN: out of memory");
  m->g = g;
  m->ctx = gpuCtx;
  cu_result_t r = g->stream_create(&m->stream, CU_STREAM_NON_BLOCKING);
  if (r != CUDA_DRV_SUCCESS) {
    free(m);
    return CU_FAIL("cuStreamCreate (GIN)", r);
  }
  *out = (gin_mem_ops_t){cuda_shared_alloc, cuda_shared_free, cuda_dev_alloc, cuda_dev_free, cuda_copy, cuda_copy,
                         cuda_thread_start, NULL, m};
  return ncclSuccess;
}

void gin_mem_cuda_close(gin_mem_ops_t* ops) {
  cuda_mem_t* m = ops->ctx;
  if (!m) return;
  m->g->stream_destroy(m->stream);
  free(m);
  ops->ctx = NULL;
}
