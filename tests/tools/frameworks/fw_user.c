/* A library that calls NCCL as torch's libtorch_cuda.so does: linked against
 * libnccl.so.2 with a DT_RPATH to another copy (test_other_nccl, or
 * NVIDIA's own where the CUDA toolkit has it, FW_USER_ALLREDUCE). The proof
 * in tools/gpu/frameworks/fwlib.py reads which copy its calls bind to. */
#include "nccl.h"

__attribute__((visibility("default"))) int fw_user_version(void) {
  int v = 0;
  return ncclGetVersion(&v) == ncclSuccess ? v : -1;
}

#ifdef FW_USER_ALLREDUCE
/* Imports ncclAllReduce too, as torch does (never called). */
__attribute__((visibility("default"))) void* fw_user_allreduce(void) { return (void*)&ncclAllReduce; }
#endif
