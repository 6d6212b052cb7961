/* The host executor behind the executor interface: channel threads of this
 * process run the items, so launches complete on return and there is no
 * device context, stream or graph to deal with. */
#include <string.h>

#include "base/err.h"
#include "base/param.h"
#include "comm/comm.h"
#include "exec/exec.h"
#include "host_exec.h"
#include "host_reduce.h"
#include "base/dtype.h"

static ncclResult_t host_ops_bind(struct ncclComm* comm) {
  (void)comm;
  return ncclSuccess;
}
static void host_ops_unbind(struct ncclComm* comm) { (void)comm; }
static ncclResult_t host_ops_ctx_save(void** ctx) {
  *ctx = NULL;
  return ncclSuccess;
}
static void host_ops_ctx_restore(void* ctx) { (void)ctx; }

static ncclResult_t host_ops_create(struct ncclComm* comm, void** out) {
  dp_state_t* dp = &comm->dp;
  host_exec_config_t cfg = {comm->rank, comm->nRanks, dp->ch.nChannels, dp->ch.channels, comm->abortFlag,
                            (uint32_t)param_NCCL_WORK_FIFO_BYTES(), &comm->profile,
                            param_MKCCL_TIMEOUT(), param_MKCCL_HOST_SPIN_US(),
                            (int)param_MKCCL_HOST_STREAM_STORES(), param_MKCCL_HOST_STREAM_MIN_BYTES(),
                            param_MKCCL_HOST_LL_POLLS(), param_MKCCL_HOST_SINGLE_STREAM_BYTES()};
  host_exec_t* ex = NULL;
  MK_CHECK(host_exec_create(&cfg, &ex));
  *out = ex;
  return ncclSuccess;
}
static void host_ops_destroy(void* ex) { host_exec_destroy(ex); }

static ncclResult_t host_ops_launch(void* ex, const mk_work_t* works, int n, int nChannels, void* stream,
                                    int captured) {
  (void)nChannels;
  (void)stream;
  (void)captured;
  return host_exec_run(ex, works, n);
}
static ncclResult_t host_ops_run_here(void* ex, const mk_work_t* w) { return host_exec_run_here(ex, w); }

static ncclResult_t host_ops_copy(void* ex, void* dst, const void* src, size_t bytes, void* stream) {
  (void)ex;
  (void)stream;
  if (dst != src) memmove(dst, src, bytes);
  return ncclSuccess;
}
static ncclResult_t host_ops_reduce_alone(void* ex, void* dst, const void* src, size_t count, int type, int op,
                                          uint64_t scalar, int scalarPtr) {
  (void)ex;
  host_redop_t r = {type, op, scalarPtr ? host_scalar_load((const void*)(uintptr_t)scalar, type) : scalar};
  if (count) host_reduce_copy(&r, dst, NULL, NULL, src, count, 1);
  return ncclSuccess;
}
static ncclResult_t host_ops_stream_join(void* ex, void* waiter, void* waited) {
  (void)ex;
  (void)waiter;
  (void)waited;
  return ncclSuccess;
}
static ncclResult_t host_ops_host_call(void* ex, void* stream, void (*fn)(void*), void* arg) {
  (void)ex;
  (void)stream;
  fn(arg);
  return ncclSuccess;
}
static ncclResult_t host_ops_sync_conns(void* ex, struct ncclComm* comm, void* stream, int wait) {
  (void)ex;
  (void)comm;
  (void)stream;
  (void)wait;
  return ncclSuccess;
}
static int host_ops_capture_begin(void* stream, int* prevMode) {
  (void)stream;
  *prevMode = -1;
  return 0;
}
static void host_ops_capture_end(int prevMode) { (void)prevMode; }
static int host_ops_pointer_ok(const void* ptr) { return ptr != NULL; }
static int host_ops_timed_out(void* ex) {
  (void)ex;
  return 0; /* the host executor's waits fail with their own error */
}

static ncclResult_t host_ops_win_create(void* ex, struct ncclComm* comm, void* buff, size_t size, int lsaRank,
                                        int lsaSize, int listed, exec_win_t* out) {
  (void)ex, (void)comm, (void)buff, (void)size, (void)lsaRank, (void)lsaSize, (void)listed, (void)out;
  return MK_FAIL(ncclInvalidUsage, "a host communicator has no device memory to map windows of the device API into");
}
static void host_ops_win_destroy(void* ex, exec_win_t* win) { (void)ex, (void)win; }
static ncclResult_t host_ops_win_table(void* ex, void** table) {
  (void)ex, (void)table;
  return MK_FAIL(ncclInvalidUsage, "a host communicator has no device window table");
}

const exec_ops_t host_exec_ops = {
    "host",           host_ops_bind,        host_ops_unbind,    host_ops_ctx_save,      host_ops_ctx_restore,
    host_ops_create,  host_ops_destroy,     host_ops_launch,    host_ops_run_here,      host_ops_copy,
    host_ops_reduce_alone,
    host_ops_stream_join, host_ops_host_call, host_ops_sync_conns, host_ops_capture_begin, host_ops_capture_end,
    host_ops_pointer_ok, host_ops_timed_out, host_ops_win_create, host_ops_win_destroy, host_ops_win_table,
};
