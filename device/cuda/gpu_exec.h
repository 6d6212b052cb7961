/* The GPU executor, host side: the kernels' module on the communicator's
 * device, the device copy of the channels and connections (dev_comm.h), the
 * work FIFO in pinned host memory the kernel reads, and launches on the
 * user's stream that never block the host. Work FIFO space comes back
 * through events recorded after each launch. */
#ifndef MKCCL_CUDA_GPU_EXEC_H
#define MKCCL_CUDA_GPU_EXEC_H

#include "device/common/work.h"
#include "nccl.h"

struct ncclComm;
typedef struct gpu_exec gpu_exec_t;

/* On the comm's device (its context is current on the calling thread). */
ncclResult_t gpu_exec_create(struct ncclComm* comm, gpu_exec_t** out);
void gpu_exec_destroy(gpu_exec_t* ex);

/* Make the comm's device's primary context current (holding it from the
 * first call until gpu_exec_unbind). */
ncclResult_t gpu_exec_bind(struct ncclComm* comm);
void gpu_exec_unbind(struct ncclComm* comm);

/* The calling thread's current context, and putting it back. */
ncclResult_t gpu_exec_ctx_save(void** ctx);
void gpu_exec_ctx_restore(void* ctx);

/* Copy connections that were connected since the last call to the device
 * (connectors already used by kernels keep their device step counters):
 * ordered before the next launch on `stream`, or with `wait` (at init) on
 * the executor's own non-blocking stream, returning once copied. */
ncclResult_t gpu_exec_sync_conns(gpu_exec_t* ex, struct ncclComm* comm, void* stream, int wait);

/* CUDA graph capture: whether `stream` is being captured; if so this thread
 * is switched to relaxed capture mode (*prevMode to give back with
 * gpu_exec_capture_end), so that set-up calls made while planning (lazy
 * connections, buffers) are allowed and not captured. */
int gpu_exec_capture_begin(void* stream, int* prevMode);
void gpu_exec_capture_end(int prevMode);

/* Launch `n` items on `stream` (a cudaStream_t; NULL is the legacy stream),
 * channels [0, nChannels). Returns once queued. `captured` (the stream is
 * being captured, gpu_exec_capture_begin): the items go to a buffer kept
 * for the graph's replays (freed with the executor). */
ncclResult_t gpu_exec_launch(gpu_exec_t* ex, const mk_work_t* works, int n, int nChannels, void* stream, int captured);

/* fn(arg) on a CUDA thread once the stream's earlier work is done; inside a
 * capture it becomes a host node of the graph, run at every replay. fn must
 * not call CUDA. */
ncclResult_t gpu_exec_host_call(gpu_exec_t* ex, void* stream, void (*fn)(void*), void* arg);

/* Work queued on `waiter` from now on runs after what `waited` holds now
 * (the streams of one group: captured alike, it becomes a graph edge). */
ncclResult_t gpu_exec_stream_join(gpu_exec_t* ex, void* waiter, void* waited);

/* Copy `bytes` from src to dst on `stream` (a one-rank collective, a
 * Send/Recv to itself). */
ncclResult_t gpu_exec_copy(gpu_exec_t* ex, void* dst, const void* src, size_t bytes, void* stream);

/* Whether a kernel gave up waiting on a peer (MKCCL_TIMEOUT without
 * progress) and raised the abort flag. */
int gpu_exec_timed_out(gpu_exec_t* ex);

/* Whether ptr is memory the comm's GPU can use in a kernel. */
int gpu_exec_pointer_ok(const void* ptr);

#endif
