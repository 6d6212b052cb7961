/* A library that calls NCCL as torch's libtorch_cuda.so does: linked against
 * libnccl.so.2 with a DT_RPATH to another copy (test_other_nccl). The proof
 * in tools/gpu/frameworks/fwlib.py reads which copy its calls bind to. */
#include "nccl.h"

__attribute__((visibility("default"))) int fw_user_version(void) {
  int v = 0;
  return ncclGetVersion(&v) == ncclSuccess ? v : -1;
}
