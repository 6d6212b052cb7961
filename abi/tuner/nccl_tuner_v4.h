/* NCCL tuner plugin ABI v4 (frozen). Exported as `ncclTunerPlugin_v4`.
 * Adds regBuff to getCollInfo: 1 when the user buffers can be registered. */
#ifndef MKCCL_ABI_TUNER_NCCL_TUNER_V4_H
#define MKCCL_ABI_TUNER_NCCL_TUNER_V4_H

#include "tuner/nccl_tuner.h"

typedef struct {
  const char* name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** context);
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels);
  ncclResult_t (*destroy)(void* context);
} ncclTuner_v4_t;

#endif
