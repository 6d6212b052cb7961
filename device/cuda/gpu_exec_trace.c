/* MKCCL_GPU_TRACE: a record in device memory of channel 0's slice events,
 * which the kernels write and destroy prints (diagnostics: the cost of a
 * slice's wait, barrier, data and posts on a real GPU). */
#include <stdio.h>
#include <stdlib.h>

#include "base/param.h"
#include "device/cuda/gpu_exec_internal.h"

ncclResult_t gpu_exec_trace_open(gpu_exec_t* ex, struct ncclComm* comm) {
  (void)comm;
  const cuda_gpu_t* g = ex->g;
  int64_t traceCap = param_MKCCL_GPU_TRACE();
  if (traceCap <= 0 || traceCap >= (1 << 20)) return ncclSuccess;
  size_t traceBytes = (1 + 2 * (size_t)traceCap) * sizeof(uint64_t);
  cu_deviceptr_t traceDev;
  if (g->mem_alloc(&traceDev, traceBytes) != CUDA_DRV_SUCCESS) return ncclSuccess;
  if (g->memset_d8(traceDev, 0, traceBytes) != CUDA_DRV_SUCCESS) {
    g->mem_free(traceDev);
    return ncclSuccess;
  }
  ex->trace = (uint64_t*)(uintptr_t)traceDev;
  ex->hostComm->trace = ex->trace;
  ex->hostComm->traceCap = (uint32_t)traceCap;
  return ncclSuccess;
}

void gpu_exec_trace_close(gpu_exec_t* ex) {
  if (ex->trace) ex->g->mem_free((cu_deviceptr_t)(uintptr_t)ex->trace);
}

/* The last traced kernel's events, one line each, microseconds from the
 * kernel's start. */
void gpu_exec_trace_print(gpu_exec_t* ex) {
  if (!ex->trace) return;
  uint32_t cap = ex->hostComm->traceCap;
  uint64_t* t = calloc(1 + 2 * (size_t)cap, sizeof(uint64_t));
  if (!t) return;
  if (ex->g->memcpy_dtoh(t, (cu_deviceptr_t)(uintptr_t)ex->trace, (1 + 2 * (size_t)cap) * sizeof(uint64_t)) ==
      CUDA_DRV_SUCCESS) {
    static const char* evs[] = {"kernel", "slice", "waited", "go", "data", "posted", "run", "bound", "prev", "end"};
    uint64_t n = t[0] < cap ? t[0] : cap;
    fprintf(stderr, "# mkccl trace rank %d: %llu events of channel 0 (us from kernel start; prim, slice, bytes)\n",
            ex->rank, (unsigned long long)n);
    for (uint64_t i = 0; i < n; i++) {
      uint64_t c = t[2 + 2 * i];
      fprintf(stderr, "# rank %d %9.3f %-6s prim %llu slice %llu bytes %llu\n", ex->rank,
              (double)(int64_t)(t[1 + 2 * i] - t[1]) / 1e3, evs[(c & 15) < 10 ? (c & 15) : 0],
              (unsigned long long)((c >> 4) & 0xff), (unsigned long long)((c >> 12) & 0xff),
              (unsigned long long)(c >> 32));
    }
  }
  free(t);
}
