/* NCCL tuner plugin ABI v2 (frozen). Exported as `ncclTunerPlugin_v2`.
 * getCollInfo answers an algorithm and a protocol (both, or neither) and
 * optionally a channel count; no cost table yet. Unset outputs keep the
 * core's choice; a non-success return falls back to the core's choice. */
#ifndef MKCCL_ABI_TUNER_NCCL_TUNER_V2_H
#define MKCCL_ABI_TUNER_NCCL_TUNER_V2_H

#include "tuner/nccl_tuner.h"

typedef struct {
  const char* name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** context);
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int collNetSupport,
                              int nvlsSupport, int numPipeOps, int* algorithm, int* protocol, int* nChannels);
  ncclResult_t (*destroy)(void* context);
} ncclTuner_v2_t;

#endif
