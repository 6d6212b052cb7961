/* The library loads and answers without any CUDA driver; errors carry text. */
#include <string.h>

#include "check.h"
#include "nccl.h"

int main(void) {
  int version = 0;
  CHECK_NCCL(ncclGetVersion(&version));
  CHECK_EQ_INT(version, NCCL_VERSION_CODE);
  CHECK_EQ_INT(ncclGetVersion(NULL), ncclInvalidArgument);
  CHECK_STR_CONTAINS(ncclGetLastError(NULL), "version is NULL");
  CHECK(strcmp(ncclGetErrorString(ncclSuccess), "no error") == 0);
  CHECK_STR_CONTAINS(ncclGetErrorString(ncclRemoteError), "remote");
  /* pncclX is the same function as ncclX. */
  CHECK(pncclGetVersion(&version) == ncclSuccess && version == 22809);
  return 0;
}
