/* NCCL tuner plugin ABI v3 (frozen). Exported as `ncclTunerPlugin_v3`.
 * getCollInfo edits the core's cost table (see nccl_tuner.h) instead of
 * naming an algorithm and protocol. */
#ifndef MKCCL_ABI_TUNER_NCCL_TUNER_V3_H
#define MKCCL_ABI_TUNER_NCCL_TUNER_V3_H

#include "tuner/nccl_tuner.h"

typedef struct {
  const char* name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** context);
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int* nChannels);
  ncclResult_t (*destroy)(void* context);
} ncclTuner_v3_t;

#endif
