/* Another libnccl.so.2 (say, the one a Python package ships), found by a
 * program's run path: its version tells it apart from mkccl's. */
#include "nccl.h"

__attribute__((visibility("default"))) ncclResult_t ncclGetVersion(int* version) {
  *version = 99999;
  return ncclSuccess;
}
