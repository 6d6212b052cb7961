/* Whether a communicator can take new work, and remembering work that failed. */
#include "base/err.h"
#include "comm/comm.h"
#include "exec/exec.h"
#include "proxy/proxy.h"

void comm_poll_device_error(struct ncclComm* comm) {
  /* On every call of a GPU comm: a timed-out kernel, and the proxy on a
   * failed network peer, raise the abort flag after recording why, so one
   * load spares the rest. */
  if (comm->cudaDev < 0 || !comm->dp.exec.state || !__atomic_load_n(comm->abortFlag, __ATOMIC_ACQUIRE)) return;
  if (__atomic_load_n(&comm->asyncResult, __ATOMIC_ACQUIRE) != ncclSuccess) return;
  if (comm->dp.exec.ops->timed_out(comm->dp.exec.state)) {
    MK_WARN("Rank %d: a GPU kernel waited on a peer for MKCCL_TIMEOUT without progress (a dead or stuck peer); the "
            "communicator failed (ncclRemoteError): abort it", comm->rank);
    comm_async_error_set(comm, ncclRemoteError);
    return;
  }
  /* The kernels end on the flag without an error of their own: the proxy's
   * failure is the communicator's (ncclCommGetAsyncError must tell it, not
   * only the next call). A user's ncclCommAbort leaves no proxy error. */
  ncclResult_t proxyRes = proxy_client_error(&comm->dp.proxy);
  if (proxyRes != ncclSuccess) {
    /* A dead peer closes its network connections and its watch connection
     * at once: the watch's text (naming it) is the better answer. */
    if (watch_failure_wait(comm, NULL, 0, WATCH_CAUSE_WAIT_MS) != WATCH_FAIL_NONE) return;
    char name[160];
    int peer = proxy_client_error_peer(&comm->dp.proxy);
    MK_WARN("Rank %d: the network connection to %s failed (%s); the communicator failed: abort it", comm->rank,
            peer >= 0 ? watch_rank_name(comm, peer, name, sizeof(name)) : "a peer", ncclGetErrorString(proxyRes));
    comm_async_error_set(comm, proxyRes);
  }
}

ncclResult_t comm_check_usable(struct ncclComm* comm, const char* fn) {
  MK_CHECK(comm_ensure_ready(comm, fn));
  comm_poll_device_error(comm);
  if (__atomic_load_n(&comm->revoked, __ATOMIC_ACQUIRE))
    return MK_FAIL(ncclInvalidUsage, "%s: comm %p was revoked (ncclCommRevoke): it can only be split, shrunk, "
                   "finalized, destroyed or aborted", fn, (void*)comm);
  ncclResult_t async = __atomic_load_n(&comm->asyncResult, __ATOMIC_ACQUIRE);
  char why[WATCH_TEXT_MAX];
  if (async != ncclSuccess && watch_failure(comm, why, sizeof(why)) != WATCH_FAIL_NONE)
    return MK_FAIL(async, "%s: comm %p (rank %d) failed: %s; abort it", fn, (void*)comm, comm->rank, why);
  if (async != ncclSuccess)
    return MK_FAIL(async, "%s: comm %p had an error earlier (%s); abort it", fn, (void*)comm, ncclGetErrorString(async));
  if (__atomic_load_n(comm->abortFlag, __ATOMIC_ACQUIRE)) {
    /* The proxy saw a peer fail and raised the flag between two calls: that
     * failure is the answer (and the comm's async error), not a user abort. */
    ncclResult_t proxyRes = proxy_client_error(&comm->dp.proxy);
    char why[WATCH_TEXT_MAX];
    if (proxyRes != ncclSuccess && watch_failure_wait(comm, why, sizeof(why), WATCH_CAUSE_WAIT_MS) != WATCH_FAIL_NONE)
      return MK_FAIL(ncclRemoteError, "%s: comm %p (rank %d) failed: %s; abort it", fn, (void*)comm, comm->rank, why);
    if (proxyRes != ncclSuccess) {
      comm_async_error_set(comm, proxyRes);
      char name[160];
      int peer = proxy_client_error_peer(&comm->dp.proxy);
      return MK_FAIL(proxyRes, "%s: comm %p (rank %d): the network connection to %s failed (%s); abort it", fn,
                     (void*)comm, comm->rank, peer >= 0 ? watch_rank_name(comm, peer, name, sizeof(name)) : "a peer",
                     ncclGetErrorString(proxyRes));
    }
    return MK_FAIL(ncclInvalidUsage, "%s: comm %p is being aborted", fn, (void*)comm);
  }
  return ncclSuccess;
}

void comm_async_error_set(struct ncclComm* comm, ncclResult_t res) {
  ncclResult_t expected = ncclSuccess;
  __atomic_compare_exchange_n(&comm->asyncResult, &expected, res, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
