/* ncclCommWindowRegister/Deregister: a buffer registered by every rank of
 * a communicator, collectively, as NCCL 2.27+ does. Every rank's size and
 * flags are exchanged first, and a mismatch fails on every rank alike
 * instead of registering on some. On a GPU communicator the window is
 * then mapped into every LSA peer and its handle is what NCCL's device
 * code reads (api/window.h); a host communicator's window is a checked
 * record of the range, and collectives on it run as on any buffer. */
#include <stdlib.h>

#include "api/api.h"
#include "api/window.h"
#include "base/err.h"
#include "bootstrap/bootstrap.h"
#include "comm/comm.h"
#include "exec/exec.h"
#include "transport/transport.h"

#define WINDOW_FLAGS (NCCL_WIN_DEFAULT | NCCL_WIN_COLL_SYMMETRIC)

typedef struct {
  uint64_t size;
  int32_t flags;
  int32_t pad;
} window_peer_t;

/* Every rank's size and flags; ncclInvalidUsage on all of them when any
 * differs (the same table everywhere, so the same verdict). */
static ncclResult_t window_agree(struct ncclComm* comm, size_t size, int flags, const char* fn) {
  window_peer_t* all = calloc((size_t)comm->nRanks, sizeof(*all));
  if (!all) return MK_FAIL(ncclSystemError, "%s: out of memory", fn);
  all[comm->rank] = (window_peer_t){(uint64_t)size, flags, 0};
  ncclResult_t res = bootstrap_allgather(comm->bootstrap, all, sizeof(*all));
  if (res != ncclSuccess) {
    free(all);
    return MK_FAIL(res, "%s: exchanging the window with the other ranks failed", fn);
  }
  for (int r = 1; r < comm->nRanks && res == ncclSuccess; r++)
    if (all[r].size != all[0].size || all[r].flags != all[0].flags)
      res = MK_FAIL(ncclInvalidUsage, "%s: ranks disagree: rank 0 registers %llu bytes (flags 0x%x), rank %d %llu (0x%x)",
                    fn, (unsigned long long)all[0].size, all[0].flags, r, (unsigned long long)all[r].size, all[r].flags);
  free(all);
  return res;
}

static ncclResult_t window_check(const struct ncclComm* comm, ncclWindow_t win, const char* fn, api_window_t** out) {
  api_window_t* w = win ? api_window_find(comm, win) : NULL;
  if (!w || w->internal) return MK_FAIL(ncclInvalidArgument, "%s: window %p was not registered with this communicator", fn, (void*)win);
  *out = w;
  return ncclSuccess;
}

MK_API(ncclResult_t, CommWindowRegister, ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags) {
  const char* fn = "ncclCommWindowRegister";
  MK_CHECK(comm_check_usable(comm, fn));
  if (!buff) return MK_FAIL(ncclInvalidArgument, "%s: buff is NULL", fn);
  if (!win) return MK_FAIL(ncclInvalidArgument, "%s: win is NULL", fn);
  if (size == 0) return MK_FAIL(ncclInvalidArgument, "%s: size is 0", fn);
  if (winFlags & ~WINDOW_FLAGS) return MK_FAIL(ncclInvalidArgument, "%s: unknown flags 0x%x", fn, winFlags);
  if (comm->cudaDev >= 0 && !comm->dp.exec.ops->pointer_ok(buff))
    return MK_FAIL(ncclInvalidArgument, "%s: a GPU communicator's window must be device (or registered host) memory", fn);
  MK_CHECK(window_agree(comm, size, winFlags, fn));
  api_window_t* w;
  MK_CHECK(api_window_create(comm, buff, size, winFlags, 1, &w));
  ncclResult_t res = api_window_symm_added(comm, w);
  if (res != ncclSuccess) {
    api_window_destroy(w); /* every rank failed alike: the resources' creation agreed on it */
    return res;
  }
  *win = w->handle;
  return ncclSuccess;
}

MK_API(ncclResult_t, CommWindowDeregister, ncclComm_t comm, ncclWindow_t win) {
  const char* fn = "ncclCommWindowDeregister";
  MK_CHECK(comm_check(comm, fn));
  api_window_t* w;
  MK_CHECK(window_check(comm, win, fn, &w));
  api_window_symm_removing(comm, w);
  /* What transports registered of it with others (a net plugin) goes too. */
  if (comm->dp.tr.ready) transport_set_mem_deregister(&comm->dp.tr.set, w->userPtr, w->size);
  api_window_destroy(w);
  return ncclSuccess;
}

MK_API(ncclResult_t, WinGetUserPtr, ncclComm_t comm, ncclWindow_t win, void** outUserPtr) {
  const char* fn = "ncclWinGetUserPtr";
  MK_CHECK(comm_check(comm, fn));
  if (!outUserPtr) return MK_FAIL(ncclInvalidArgument, "%s: outUserPtr is NULL", fn);
  api_window_t* w;
  MK_CHECK(window_check(comm, win, fn, &w));
  *outUserPtr = w->userPtr;
  return ncclSuccess;
}
