/* Version, error strings and the last error. */
#include <stdio.h>

#include "api/api.h"
#include "base/err.h"
#include "base/log.h"
#include "comm/comm.h"
#include "watch/watch.h"

MK_API(ncclResult_t, GetVersion, int* version) {
  if (!version) return MK_FAIL(ncclInvalidArgument, "ncclGetVersion: version is NULL");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

MK_API(const char*, GetErrorString, ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the mkccl developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}

/* The process's last WARN, as in NCCL; but for a communicator that the
 * peer watch failed, that failure (a dead or departed rank, named), not a
 * WARN that came after it (a transport's account of the same death, from
 * another thread). */
MK_API(const char*, GetLastError, ncclComm_t comm) {
  static __thread char text[1024];
  char why[WATCH_TEXT_MAX];
  if (comm && comm->startMagic == COMM_MAGIC && comm->endMagic == COMM_MAGIC &&
      watch_failure(comm, why, sizeof(why)) != WATCH_FAIL_NONE) {
    snprintf(text, sizeof(text), "Rank %d: communicator failed: %s", comm->rank, why);
    return text;
  }
  return err_last_get();
}

MK_API(void, ResetDebugInit, void) { log_reset(); }

/* NCCL's undeprecated name for the same reset; like NCCL's, it has no
 * pnccl twin. */
__attribute__((visibility("default"))) void ncclResetDebugInitInternal(void);
void ncclResetDebugInitInternal(void) { log_reset(); }
