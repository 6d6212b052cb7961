/* A tuner for tests, one source for every ABI version: compiled with
 * TEST_TUNER_VERSION=2..6 it exports ncclTunerPlugin_v<N> only. It forces
 * the algorithm named by MKCCL_TEST_TUNER_FORCE ("ring" or "tree") with
 * Simple, asks for 3 channels, and (v5+) multiplies the base latencies by
 * 10; v6 sets every chunk size to 12345. Test code: reads the environment
 * directly. */
#include <stdlib.h>
#include <string.h>

#include "tuner/nccl_tuner.h"

#ifndef TEST_TUNER_VERSION
#error "TEST_TUNER_VERSION must be 2..6"
#endif

#define EXPORT __attribute__((visibility("default")))

typedef struct {
  int algo;
} test_ctx_t;

static int test_forced_algo(void) {
  const char* f = getenv("MKCCL_TEST_TUNER_FORCE");
  return f && strcmp(f, "tree") == 0 ? NCCL_ALGO_TREE : NCCL_ALGO_RING;
}

static ncclResult_t test_ctx_new(void** ctx) {
  test_ctx_t* c = calloc(1, sizeof(*c));
  if (!c) return ncclSystemError;
  c->algo = test_forced_algo();
  *ctx = c;
  return ncclSuccess;
}

static ncclResult_t test_free(void* ctx) {
  free(ctx);
  return ncclSuccess;
}

__attribute__((unused)) static void test_force(void* ctx, float** collCostTable, int* nChannels) {
  float(*t)[NCCL_NUM_PROTOCOLS] = (float(*)[NCCL_NUM_PROTOCOLS])collCostTable;
  int a = ((test_ctx_t*)ctx)->algo;
  if (t[a][NCCL_PROTO_SIMPLE] != (float)NCCL_ALGO_PROTO_IGNORE) t[a][NCCL_PROTO_SIMPLE] = 0.0f;
  *nChannels = 3;
}

#if TEST_TUNER_VERSION <= 4
static ncclResult_t test_init(size_t nRanks, size_t nNodes, ncclDebugLogger_t log, void** ctx) {
  (void)nRanks, (void)nNodes, (void)log;
  return test_ctx_new(ctx);
}
#else
static ncclResult_t test_init(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes, ncclDebugLogger_t log,
                              ncclNvlDomainInfo_v5_t* nvl, ncclTunerConstants_v5_t* constants) {
  (void)commId, (void)nRanks, (void)nNodes, (void)log;
  if (nvl->nNvlDomains < 1) return ncclInvalidArgument;
  for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) constants->baseLatencies[a][p] *= 10.0;
  return test_ctx_new(ctx);
}
#endif

#if TEST_TUNER_VERSION == 2
static ncclResult_t test_get(void* ctx, ncclFunc_t func, size_t nBytes, int collNet, int nvls, int pipeOps,
                             int* algorithm, int* protocol, int* nChannels) {
  (void)func, (void)nBytes, (void)collNet, (void)nvls, (void)pipeOps;
  *algorithm = ((test_ctx_t*)ctx)->algo;
  *protocol = NCCL_PROTO_SIMPLE;
  *nChannels = 3;
  return ncclSuccess;
}
EXPORT const ncclTuner_v2_t ncclTunerPlugin_v2 = {"test-v2", test_init, test_get, test_free};
#elif TEST_TUNER_VERSION == 3
static ncclResult_t test_get(void* ctx, ncclFunc_t func, size_t nBytes, int pipeOps, float** table, int nA, int nP,
                             int* nChannels) {
  (void)func, (void)nBytes, (void)pipeOps, (void)nA, (void)nP;
  test_force(ctx, table, nChannels);
  return ncclSuccess;
}
EXPORT const ncclTuner_v3_t ncclTunerPlugin_v3 = {"test-v3", test_init, test_get, test_free};
#else
static ncclResult_t test_get(void* ctx, ncclFunc_t func, size_t nBytes, int pipeOps, float** table, int nA, int nP,
                             int regBuff, int* nChannels) {
  (void)func, (void)nBytes, (void)pipeOps, (void)nA, (void)nP, (void)regBuff;
  test_force(ctx, table, nChannels);
  return ncclSuccess;
}
#if TEST_TUNER_VERSION == 4
EXPORT const ncclTuner_v4_t ncclTunerPlugin_v4 = {"test-v4", test_init, test_get, test_free};
#elif TEST_TUNER_VERSION == 5
EXPORT const ncclTuner_v5_t ncclTunerPlugin_v5 = {"test-v5", test_init, test_get, test_free};
#else
static ncclResult_t test_chunk(void* ctx, ncclFunc_t func, size_t nBytes, int algo, int proto, int nChannels,
                               size_t* chunkSize) {
  (void)ctx, (void)func, (void)nBytes, (void)algo, (void)proto, (void)nChannels;
  *chunkSize = 12345;
  return ncclSuccess;
}
EXPORT const ncclTuner_v6_t ncclTunerPlugin_v6 = {"test-v6", test_init, test_get, test_free, test_chunk};
#endif
#endif
