/* The kernels' first launch at init, and MKCCL_GPU_PROBE's report of it. */
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/err.h"
#include "device/cuda/gpu_exec_internal.h"

/* Wait for a stream without blocking forever: polls for at most `ms`. */
static cu_result_t gpu_stream_wait(const cuda_gpu_t* g, cu_stream_t s, int ms) {
  for (int i = 0;; i++) {
    cu_result_t r = g->stream_query(s);
    if (r != CUDA_DRV_ERROR_NOT_READY || i >= ms * 10) return r;
    usleep(100);
  }
}

/* The kernel's first launch, with no work (it only bumps its channel 0
 * status word), at init, waited for. A module's first launch may need the
 * context to itself even after its function was loaded: two ranks of one
 * process on one GPU hang when rank 1's first kernel cannot start while
 * rank 0's runs, waiting for it. A launch
 * still queued after 10 s (another kernel of the context holds it) is
 * harmless, it has no work: init goes on. With MKCCL_GPU_PROBE the
 * result is reported too: it tells "kernels of this communicator cannot run
 * or their status is invisible" apart from a hang in the protocol. */
int gpu_exec_first_launch(gpu_exec_t* ex, int report) {
  const cuda_gpu_t* g = ex->g;
  volatile uint64_t* ticks = ex->status + MK_STATUS_TICKS;
  uint64_t before = *ticks;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  uint32_t mask = ex->fifo.bytes - 1;
  cu_result_t r = gpu_exec_kernel_launch(ex, ex->kernel, ex->fifoBuf, mask, 0, 0, 1, ex->initStream, NULL);
  if (r == CUDA_DRV_SUCCESS && ex->kernelLL)
    r = gpu_exec_kernel_launch(ex, ex->kernelLL, ex->fifoBuf, mask, 0, 0, 1, ex->initStream, NULL);
  if (r == CUDA_DRV_SUCCESS) r = gpu_stream_wait(g, ex->initStream, 10000);
  double ms = mk_ms_since(&t0);
  if (!report) {
    if (r == CUDA_DRV_SUCCESS) *ticks = before;
    else
      MK_WARN("Rank %d: the kernel's first launch (no work) at init: %s after %.2f ms", ex->rank,
              gpu_exec_query_str(r), ms);
    return 1;
  }
  MK_WARN("GPU probe: rank %d device %d: empty kernel %s after %.2f ms; status word %llu -> %llu (%s); kernel local "
          "memory %d B/thread, stack limit was %zu; module load %.1f ms; driver %d",
          ex->rank, ex->dev, gpu_exec_query_str(r), ms, (unsigned long long)before, (unsigned long long)*ticks,
          *ticks == before + 1000000 ? "visible" : "NOT visible", ex->localBytes, ex->stackLimit, ex->loadMs,
          cuda_driver() ? cuda_driver()->driverVersion : 0);
  *ticks = before;
  return r == CUDA_DRV_SUCCESS;
}
