/* The GPU executor behind the executor interface. Creating it also gives
 * the device its first copy of the connections, so a communicator is
 * usable once init returns. */
#include "base/err.h"
#include "exec/exec.h"
#include "gpu_exec.h"
#include "gpu_win.h"

static ncclResult_t gpu_ops_create(struct ncclComm* comm, void** out) {
  gpu_exec_t* ex = NULL;
  MK_CHECK(gpu_exec_create(comm, &ex));
  ncclResult_t res = gpu_exec_sync_conns(ex, comm, NULL, 1);
  if (res != ncclSuccess) {
    gpu_exec_destroy(ex);
    return res;
  }
  *out = ex;
  return ncclSuccess;
}
static void gpu_ops_destroy(void* ex) { gpu_exec_destroy(ex); }
static ncclResult_t gpu_ops_launch(void* ex, const mk_work_t* works, int n, int nChannels, void* stream,
                                   int captured) {
  return gpu_exec_launch(ex, works, n, nChannels, stream, captured);
}
static ncclResult_t gpu_ops_run_here(void* ex, const mk_work_t* w) {
  (void)ex;
  (void)w;
  return MK_FAIL(ncclInvalidUsage, "the GPU executor runs items on a stream, never on the calling thread");
}
static ncclResult_t gpu_ops_copy(void* ex, void* dst, const void* src, size_t bytes, void* stream) {
  return gpu_exec_copy(ex, dst, src, bytes, stream);
}
static ncclResult_t gpu_ops_reduce_alone(void* ex, void* dst, const void* src, size_t count, int type, int op,
                                         uint64_t scalar, int scalarPtr) {
  (void)ex, (void)dst, (void)src, (void)count, (void)type, (void)op, (void)scalar, (void)scalarPtr;
  return MK_FAIL(ncclInvalidUsage, "the GPU executor runs a one-rank collective as a kernel or a copy");
}
static ncclResult_t gpu_ops_stream_join(void* ex, void* waiter, void* waited) {
  return gpu_exec_stream_join(ex, waiter, waited);
}
static ncclResult_t gpu_ops_host_call(void* ex, void* stream, void (*fn)(void*), void* arg) {
  return gpu_exec_host_call(ex, stream, fn, arg);
}
static ncclResult_t gpu_ops_sync_conns(void* ex, struct ncclComm* comm, void* stream, int wait) {
  return gpu_exec_sync_conns(ex, comm, stream, wait);
}
static int gpu_ops_timed_out(void* ex) { return gpu_exec_timed_out(ex); }

const exec_ops_t gpu_exec_ops = {
    "gpu",          gpu_exec_bind,        gpu_exec_unbind,    gpu_exec_ctx_save,      gpu_exec_ctx_restore,
    gpu_ops_create, gpu_ops_destroy,      gpu_ops_launch,     gpu_ops_run_here,       gpu_ops_copy,
    gpu_ops_reduce_alone,
    gpu_ops_stream_join, gpu_ops_host_call, gpu_ops_sync_conns, gpu_exec_capture_begin, gpu_exec_capture_end,
    gpu_exec_pointer_ok, gpu_ops_timed_out, gpu_exec_win_create, gpu_exec_win_destroy, gpu_exec_win_table,
};
