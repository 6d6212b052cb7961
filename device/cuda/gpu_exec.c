/* Making and destroying the GPU executor: its set-up steps in order, each
 * with its undo (gpu_exec_internal.h), undone in reverse by one path, for a
 * failed create and for destroy alike. */
#include "device/cuda/gpu_exec.h"

#include <stdlib.h>

#include "base/err.h"
#include "base/param.h"
#include "comm/comm.h"
#include "device/cuda/gpu_exec_internal.h"
#include "device/cuda/gpu_win.h"

typedef struct {
  ncclResult_t (*make)(gpu_exec_t* ex, struct ncclComm* comm);
  void (*undo)(gpu_exec_t* ex); /* NULL: nothing to undo */
} gpu_exec_step_t;

static const gpu_exec_step_t gpu_exec_steps[] = {
    {gpu_exec_module_load, gpu_exec_module_unload},  /* the kernels */
    {gpu_exec_stream_open, gpu_exec_stream_close},   /* the set-up stream */
    {gpu_exec_devcomm_alloc, gpu_exec_devcomm_free}, /* device comm and connection tables */
    {gpu_exec_fifo_open, gpu_exec_fifo_close},       /* work FIFO and its events */
    {gpu_exec_mapped_open, gpu_exec_mapped_close},   /* abort flag and status rows, mapped */
    {gpu_exec_trace_open, gpu_exec_trace_close},     /* MKCCL_GPU_TRACE's record */
    {gpu_exec_diag_open, gpu_exec_diag_close},       /* the watchdog's read-back */
    {gpu_exec_devcomm_upload, NULL},                 /* the device comm copied there */
};
#define GPU_EXEC_STEPS ((int)(sizeof(gpu_exec_steps) / sizeof(gpu_exec_steps[0])))

/* The first `made` steps undone, last first, and the executor freed. */
static void gpu_exec_undo(gpu_exec_t* ex, int made) {
  while (made-- > 0)
    if (gpu_exec_steps[made].undo) gpu_exec_steps[made].undo(ex);
  free(ex);
}

ncclResult_t gpu_exec_create(struct ncclComm* comm, gpu_exec_t** out) {
  const cuda_gpu_t* g = cuda_gpu();
  if (!g) return ncclInvalidUsage;
  gpu_exec_t* ex = calloc(1, sizeof(*ex));
  if (!ex) return MK_FAIL(ncclSystemError, "out of memory");
  ex->g = g;
  ex->dev = comm->cudaDev;
  ex->ctx = (cu_context_t)comm->dp.exec.gpuCtx;
  ex->rank = comm->rank;
  ex->proxy = &comm->dp.proxy;
  for (int made = 0; made < GPU_EXEC_STEPS; made++) {
    ncclResult_t res = gpu_exec_steps[made].make(ex, comm);
    if (res != ncclSuccess) {
      gpu_exec_undo(ex, made);
      return res;
    }
  }
  /* A probe kernel that did not end may still use this executor's memory:
   * the executor is left allocated (a diagnostic run ends here anyway). */
  if (!gpu_exec_first_launch(ex, param_MKCCL_GPU_PROBE() != 0))
    return MK_FAIL(ncclSystemError, "Rank %d: GPU probe: an empty kernel did not end (see the GPU probe line)",
                   comm->rank);
  gpu_exec_watchdog_start(ex);
  *out = ex;
  return ncclSuccess;
}

void gpu_exec_destroy(gpu_exec_t* ex) {
  if (!ex) return;
  gpu_exec_watchdog_stop(ex);
  /* Every kernel has ended before anything it uses goes. */
  gpu_exec_fifo_drain(ex);
  gpu_exec_trace_print(ex);
  gpu_exec_graph_free(ex);
  gpu_win_table_free(ex);
  gpu_exec_undo(ex, GPU_EXEC_STEPS);
}
