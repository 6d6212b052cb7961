/* Launches on the user's stream that never block the host: the items in
 * the kernel's arguments or the work FIFO, after the communicator's last
 * launch on another stream, with an event after each. */
#include <string.h>

#include "base/err.h"
#include "device/cuda/gpu_exec_internal.h"

cu_result_t gpu_exec_kernel_launch(gpu_exec_t* ex, cu_function_t fn, const char* items, uint32_t mask, uint32_t offset,
                                   int n, int nChannels, cu_stream_t stream, const mk_work_t* inl) {
  mk_kernel_args_t args;
  memset(&args, 0, sizeof(args));
  args.comm = ex->devComm;
  args.workBuf = items;
  args.workMask = mask;
  args.workOffset = offset;
  args.nWorks = (uint32_t)n;
  if (inl) {
    args.inlined = 1;
    memcpy(args.works, inl, (size_t)n * sizeof(mk_work_t));
  }
  void* params[] = {&args};
  return ex->g->launch_kernel(fn, (unsigned)nChannels, 1, 1, MK_KERNEL_THREADS, 1, 1, 0, stream, params, NULL);
}

/* The LL-only kernel when it runs every item, else the full one. */
cu_function_t gpu_exec_kernel_for(const gpu_exec_t* ex, const mk_work_t* works, int n) {
  return ex->kernelLL && mk_works_ll_only(works, n, ex->hostComm->nRanks) ? ex->kernelLL : ex->kernel;
}

ncclResult_t gpu_exec_launch(gpu_exec_t* ex, const mk_work_t* works, int n, int nChannels, void* stream, int captured) {
  const cuda_gpu_t* g = ex->g;
  /* The kernels run rings, trees, (in LL) FLAT and symmetric items. */
  for (int i = 0; i < n; i++)
    if (works[i].coll != MK_COLL_SENDRECV && works[i].algo != MK_ALGO_RING && works[i].algo != MK_ALGO_TREE &&
        works[i].algo != MK_ALGO_SYMM && !(works[i].algo == MK_ALGO_FLAT && works[i].proto == MK_PROTO_LL))
      return MK_FAIL(ncclInternalError, "GPU executor: algorithm %d (protocol %d) is not supported", works[i].algo,
                     works[i].proto);
  if (captured) return gpu_exec_graph_launch(ex, works, n, nChannels, stream);
  /* At most MK_ARGS_WORKS items travel in the kernel's arguments: no FIFO
   * space, nothing for the kernel to read across PCIe. */
  int inl = n <= MK_ARGS_WORKS;
  uint32_t bytes = inl ? 0 : (uint32_t)(n * sizeof(mk_work_t)); /* of FIFO space */
  uint32_t offset = ex->fifo.produced;
  if (!inl) MK_CHECK(gpu_exec_fifo_push(ex, works, n));
  cu_result_t r;
  if (ex->lastEvent && stream != ex->lastStream &&
      (r = g->stream_wait_event((cu_stream_t)stream, ex->lastEvent, 0)) != CUDA_DRV_SUCCESS)
    return CU_FAIL("cuStreamWaitEvent (after the communicator's launch on another stream)", r);
  /* Watchdog on: events around the launch tell whether the kernel waits
   * behind other work of the stream, runs, or ended. */
  int diag = ex->watchdogRunning && ex->diagPre && ex->diagPost;
  if (diag) g->event_record(ex->diagPre, (cu_stream_t)stream);
  r = gpu_exec_kernel_launch(ex, gpu_exec_kernel_for(ex, works, n), ex->fifoBuf, ex->fifo.bytes - 1, offset, n,
                             nChannels, (cu_stream_t)stream, inl ? works : NULL);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuLaunchKernel", r);
  if (diag && g->event_record(ex->diagPost, (cu_stream_t)stream) == CUDA_DRV_SUCCESS) ex->diagLaunched = 1;
  /* The space these items took (none when inlined) returns once the kernel
   * is done; the event also tells destroy when the kernels ended. */
  cu_event_t ev;
  MK_CHECK(gpu_exec_fifo_event_record(ex, (cu_stream_t)stream, offset + bytes, &ev));
  ex->lastEvent = ev;
  ex->lastStream = stream;
  return ncclSuccess;
}
