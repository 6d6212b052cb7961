/* NCCL tuner plugin ABI v6 (frozen). Exported as `ncclTunerPlugin_v6`.
 * v5 plus getChunkSize (optional, may be NULL): the plugin may change the
 * chunk size the core computed for the chosen algorithm and protocol; the
 * core clamps the result to what its buffers allow. Constants and NVLink
 * domain info are v5's. mkccl's internal tuner version. */
#ifndef MKCCL_ABI_TUNER_NCCL_TUNER_V6_H
#define MKCCL_ABI_TUNER_NCCL_TUNER_V6_H

#include "tuner/nccl_tuner.h"

typedef ncclTunerConstants_v5_t ncclTunerConstants_v6_t;
typedef ncclNvlDomainInfo_v5_t ncclNvlDomainInfo_v6_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction,
                       ncclNvlDomainInfo_v6_t* nvlDomainInfo, ncclTunerConstants_v6_t* constants);
  ncclResult_t (*getCollInfo)(void* context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int regBuff, int* nChannels);
  ncclResult_t (*finalize)(void* context);
  ncclResult_t (*getChunkSize)(void* context, ncclFunc_t collType, size_t nBytes, int algo, int proto,
                               int nChannels, size_t* chunkSize);
} ncclTuner_v6_t;

#endif
