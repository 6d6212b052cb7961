/* A test tuner (NCCL tuner v5) that changes no choice. Its getCollInfo,
 * called on the thread running the collective with the communicator held,
 * calls the program's test_abort_hold(): a place where the test keeps a
 * thread inside the library as long as it likes, as a user's plugin may
 * (test_fault_abort_stress, scenario hold). */
#include <dlfcn.h>
#include <stdlib.h>

#include "tuner/nccl_tuner.h"

static void (*hold)(void);
static int hold_ctx; /* one context for every communicator: nothing per comm */

static ncclResult_t hold_init(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes, ncclDebugLogger_t log,
                              ncclNvlDomainInfo_v5_t* nvl, ncclTunerConstants_v5_t* constants) {
  (void)commId, (void)nRanks, (void)nNodes, (void)log, (void)nvl, (void)constants;
  /* The program exports it (linked with its symbols exported). */
  *(void**)&hold = dlsym(RTLD_DEFAULT, "test_abort_hold");
  *ctx = &hold_ctx;
  return ncclSuccess;
}

static ncclResult_t hold_get_coll_info(void* ctx, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                       float** collCostTable, int numAlgo, int numProto, int regBuff,
                                       int* nChannels) {
  (void)collType, (void)nBytes, (void)numPipeOps, (void)collCostTable, (void)numAlgo, (void)numProto;
  (void)ctx, (void)regBuff, (void)nChannels;
  if (hold) hold();
  return ncclSuccess;
}

static ncclResult_t hold_finalize(void* ctx) {
  (void)ctx;
  return ncclSuccess;
}

__attribute__((visibility("default"))) const ncclTuner_v5_t ncclTunerPlugin_v5 = {
    "abort-hold", hold_init, hold_get_coll_info, hold_finalize};
