/* The one answer of every exported function that is not implemented yet, so
 * that a program linked against a newer NCCL loads and runs as long as it
 * does not call them. */
#include "api/api.h"
#include "base/err.h"

ncclResult_t api_not_implemented(const char* fn, const char* what) {
  return MK_FAIL(ncclInvalidUsage, "%s is not implemented yet in mkccl %d.%d.%d (%s); see the README's status table",
                 fn, MKCCL_MAJOR, MKCCL_MINOR, MKCCL_PATCH, what);
}
