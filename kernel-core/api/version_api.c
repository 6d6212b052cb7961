/* Version, error strings and the last error. */
#include "api/api.h"
#include "base/err.h"
#include "base/log.h"

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

/* comm is unused, as in NCCL: the text is the process's last WARN. */
MK_API(const char*, GetLastError, ncclComm_t comm) {
  (void)comm;
  return err_last_get();
}

MK_API(void, ResetDebugInit, void) { log_reset(); }

/* NCCL's undeprecated name for the same reset; like NCCL's, it has no
 * pnccl twin. */
__attribute__((visibility("default"))) void ncclResetDebugInitInternal(void);
void ncclResetDebugInitInternal(void) { log_reset(); }
