/* What the profiler adapters of v1..v3 share. */
#include "profile/profile_adapt.h"

#include <string.h>

int profile_adapt_old_state(ncclProfilerEventState_t state, const ncclProfilerEventStateArgs_v6_t* in,
                            ncclProfilerEventStateArgs_v3_t* out) {
  memset(out, 0, sizeof(*out));
  switch (state) {
    case ncclProfilerProxyCtrlIdle:
    case ncclProfilerProxyCtrlActive:
    case ncclProfilerProxyCtrlSleep:
    case ncclProfilerProxyCtrlWakeup:
    case ncclProfilerProxyCtrlAppend:
    case ncclProfilerProxyCtrlAppendEnd:
      if (in) out->proxyCtrl.appendedProxyOps = in->proxyCtrl.appendedProxyOps;
      return 1;
    case ncclProfilerProxyStepSendGPUWait:
    case ncclProfilerProxyStepSendWait:
    case ncclProfilerProxyStepRecvWait:
    case ncclProfilerProxyStepRecvFlushWait:
    case ncclProfilerProxyStepRecvGPUWait:
      return 1;
    default:
      return 0;
  }
}
