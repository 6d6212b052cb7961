/* The work FIFO in pinned host memory, which kernels of launches of more
 * than MK_ARGS_WORKS items read, and the events that give its space back:
 * one recorded after each launch, reused round robin. */
#include <sched.h>

#include "base/err.h"
#include "base/param.h"
#include "device/cuda/gpu_exec_internal.h"

static int gpu_event_query(work_fifo_event_t* ev) {
  gpu_fifo_event_t* e = (gpu_fifo_event_t*)ev;
  return cuda_gpu()->event_query(e->event) == CUDA_DRV_SUCCESS;
}

ncclResult_t gpu_exec_fifo_open(gpu_exec_t* ex, struct ncclComm* comm) {
  (void)comm;
  const cuda_gpu_t* g = ex->g;
  ncclResult_t res;
  uint32_t fifoBytes = (uint32_t)param_NCCL_WORK_FIFO_BYTES();
  cu_result_t r =
      g->mem_host_alloc((void**)&ex->fifoBuf, fifoBytes, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuMemHostAlloc (work FIFO)", r);
  MK_CHECK_GOTO(work_fifo_init(&ex->fifo, ex->fifoBuf, fifoBytes), res, fail_buf);
  int n = 0;
  for (; n < GPU_EVENTS; n++) {
    if ((r = g->event_create(&ex->events[n].event, CU_EVENT_DISABLE_TIMING)) != CUDA_DRV_SUCCESS) {
      res = CU_FAIL("cuEventCreate", r);
      goto fail_events;
    }
    ex->events[n].ev.query = gpu_event_query;
  }
  return ncclSuccess;
fail_events:
  while (n-- > 0) g->event_destroy(ex->events[n].event);
fail_buf:
  g->mem_free_host(ex->fifoBuf);
  return res;
}

void gpu_exec_fifo_close(gpu_exec_t* ex) {
  for (int i = GPU_EVENTS - 1; i >= 0; i--) ex->g->event_destroy(ex->events[i].event);
  ex->g->mem_free_host(ex->fifoBuf);
}

void gpu_exec_fifo_drain(gpu_exec_t* ex) {
  for (int i = GPU_EVENTS - 1; i >= 0; i--) ex->g->event_synchronize(ex->events[i].event);
}

ncclResult_t gpu_exec_fifo_push(gpu_exec_t* ex, const mk_work_t* works, int n) {
  MK_CHECK(work_fifo_wait_room(&ex->fifo, (uint32_t)(n * sizeof(mk_work_t)), (volatile uint32_t*)ex->abortHost));
  for (int i = 0; i < n; i++) work_fifo_push(&ex->fifo, &works[i], sizeof(mk_work_t));
  __atomic_thread_fence(__ATOMIC_SEQ_CST); /* items visible before the kernel starts */
  return ncclSuccess;
}

ncclResult_t gpu_exec_fifo_event_record(gpu_exec_t* ex, cu_stream_t stream, uint32_t consumedAfter,
                                        cu_event_t* recorded) {
  gpu_fifo_event_t* e = &ex->events[ex->nextEvent];
  /* Events are reused round robin: the one to reuse is the oldest queued. */
  /* Polled with the abort flag checked, not cuEventSynchronize: the kernels
   * of an aborted communicator (or of a peer that died) may never end, and
   * the caller must get its error instead of blocking here for ever. */
  while (e->ev.queued) {
    work_fifo_poll(&ex->fifo);
    if (!e->ev.queued) break;
    if (__atomic_load_n((volatile uint32_t*)ex->abortHost, __ATOMIC_ACQUIRE))
      return MK_FAIL(ncclRemoteError, "Rank %d: aborted while waiting for a GPU launch event", ex->rank);
    sched_yield();
  }
  ex->nextEvent = (ex->nextEvent + 1) % GPU_EVENTS;
  cu_result_t r = ex->g->event_record(e->event, stream);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuEventRecord", r);
  e->ev.consumedAfter = consumedAfter;
  work_fifo_event_add(&ex->fifo, &e->ev);
  work_fifo_poll(&ex->fifo);
  *recorded = e->event;
  return ncclSuccess;
}
