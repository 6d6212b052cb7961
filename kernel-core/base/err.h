/* One result type (ncclResult_t) and the last-error text.
 *
 * An error is decided once, where it happens: MK_FAIL logs it as a WARN with
 * file and line, records the text for ncclGetLastError, and yields the code.
 * Callers pass it up with MK_CHECK / MK_CHECK_GOTO, adding nothing. */
#ifndef MKCCL_BASE_ERR_H
#define MKCCL_BASE_ERR_H

#include "nccl.h"
#include "base/log.h"

void err_last_set(const char* text);
const char* err_last_get(void);

#define MK_FAIL(res, ...) (MK_WARN(__VA_ARGS__), (res))

#define MK_CHECK(call)                                                 \
  do {                                                                 \
    ncclResult_t mk_res_ = (call);                                     \
    if (mk_res_ != ncclSuccess && mk_res_ != ncclInProgress) return mk_res_; \
  } while (0)

#define MK_CHECK_GOTO(call, res, label)                                \
  do {                                                                 \
    (res) = (call);                                                    \
    if ((res) != ncclSuccess && (res) != ncclInProgress) goto label;   \
  } while (0)

/* A system call failed: errno explains. */
#define MK_SYSFAIL(what) MK_FAIL(ncclSystemError, "%s failed: %s", (what), strerror(errno))

#endif
