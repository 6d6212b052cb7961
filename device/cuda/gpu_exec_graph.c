/* CUDA graph capture: whether a stream is being captured, the relaxed
 * capture mode for set-up made while planning, and launches into a graph,
 * whose items outlive the launch (every replay reads them). */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "device/cuda/gpu_exec_internal.h"

int gpu_exec_capture_begin(void* stream, int* prevMode) {
  const cuda_gpu_t* g = cuda_gpu();
  int status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (!g || g->stream_is_capturing((cu_stream_t)stream, &status) != CUDA_DRV_SUCCESS ||
      status == CU_STREAM_CAPTURE_STATUS_NONE)
    return 0;
  *prevMode = CU_STREAM_CAPTURE_MODE_RELAXED;
  if (g->thread_exchange_capture_mode(prevMode) != CUDA_DRV_SUCCESS) *prevMode = -1;
  return 1;
}

void gpu_exec_capture_end(int prevMode) {
  const cuda_gpu_t* g = cuda_gpu();
  if (g && prevMode >= 0) g->thread_exchange_capture_mode(&prevMode);
}

/* No FIFO space and no event (a captured event record completes nothing
 * now): at most MK_ARGS_WORKS items in the kernel's arguments, more in a
 * buffer of their own. */
ncclResult_t gpu_exec_graph_launch(gpu_exec_t* ex, const mk_work_t* works, int n, int nChannels, void* stream) {
  const cuda_gpu_t* g = ex->g;
  cu_function_t fn = gpu_exec_kernel_for(ex, works, n);
  cu_result_t r;
  if (n <= MK_ARGS_WORKS) {
    r = gpu_exec_kernel_launch(ex, fn, NULL, 0, 0, n, nChannels, (cu_stream_t)stream, works);
    if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuLaunchKernel (captured)", r);
    return ncclSuccess;
  }
  gpu_graph_work_t* w = calloc(1, sizeof(*w));
  if (!w) return MK_FAIL(ncclSystemError, "out of memory (graph work)");
  r = g->mem_host_alloc(&w->items, (size_t)n * sizeof(mk_work_t), CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  if (r != CUDA_DRV_SUCCESS) {
    free(w);
    return CU_FAIL("cuMemHostAlloc (work items of a captured launch)", r);
  }
  memcpy(w->items, works, (size_t)n * sizeof(mk_work_t));
  w->next = ex->graphWork;
  ex->graphWork = w;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  r = gpu_exec_kernel_launch(ex, fn, (const char*)w->items, 0xffffffffu, 0, n, nChannels, (cu_stream_t)stream, NULL);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuLaunchKernel (captured)", r);
  return ncclSuccess;
}

void gpu_exec_graph_free(gpu_exec_t* ex) {
  while (ex->graphWork) {
    gpu_graph_work_t* w = ex->graphWork;
    ex->graphWork = w->next;
    ex->g->mem_free_host(w->items);
    free(w);
  }
}
