/* Every struct of NCCL's device API that mkccl fills or reads, field by
 * field: one list, expanded once against NVIDIA's headers (nvcc) and once
 * against mkccl's (kernel-core/api/device_api.h), so both sides measure
 * the same things. Each side names its window table and entry types
 * devapi_window_table and devapi_window_entry, and the proxy GIN
 * backend's context devapi_gin_ctx. */
#ifndef MKCCL_TEST_DEVAPI_LAYOUT_H
#define MKCCL_TEST_DEVAPI_LAYOUT_H

#include <stddef.h>

typedef struct {
  const char* name;
  size_t value;
} devapi_layout_t;

#define DEVAPI_LAYOUT(S, F)                                                                              \
  S(struct ncclTeam) F(struct ncclTeam, nRanks) F(struct ncclTeam, rank) F(struct ncclTeam, stride)              \
  S(struct ncclMultimemHandle) F(struct ncclMultimemHandle, mcBasePtr)                                           \
  S(struct ncclLsaBarrierHandle) F(struct ncclLsaBarrierHandle, bufHandle) F(struct ncclLsaBarrierHandle, nBarriers) \
  S(struct ncclGinBarrierHandle) F(struct ncclGinBarrierHandle, signal0) F(struct ncclGinBarrierHandle, bufHandle) \
  S(struct ncclLLA2AHandle) F(struct ncclLLA2AHandle, bufHandle) F(struct ncclLLA2AHandle, nSlots)               \
  S(struct ncclWindow_vidmem) F(struct ncclWindow_vidmem, winHost) F(struct ncclWindow_vidmem, lsaFlatBase)      \
  F(struct ncclWindow_vidmem, lsaRank) F(struct ncclWindow_vidmem, worldRank) F(struct ncclWindow_vidmem, stride4G) \
  F(struct ncclWindow_vidmem, mcOffset4K) F(struct ncclWindow_vidmem, ginOffset4K)                              \
  F(struct ncclWindow_vidmem, ginWins)                                                                           \
  S(devapi_window_table) F(devapi_window_table, entries) F(devapi_window_table, next)                           \
  S(devapi_window_entry) F(devapi_window_entry, base) F(devapi_window_entry, size) F(devapi_window_entry, window)                                   \
  S(struct ncclDevComm) F(struct ncclDevComm, rank) F(struct ncclDevComm, nRanks)                               \
  F(struct ncclDevComm, nRanks_rcp32) F(struct ncclDevComm, lsaRank) F(struct ncclDevComm, lsaSize)              \
  F(struct ncclDevComm, lsaSize_rcp32) F(struct ncclDevComm, windowTable) F(struct ncclDevComm, resourceWindow)   \
  F(struct ncclDevComm, resourceWindow_inlined) F(struct ncclDevComm, lsaMultimem)                              \
  F(struct ncclDevComm, lsaBarrier) F(struct ncclDevComm, railGinBarrier) F(struct ncclDevComm, ginContextCount) \
  F(struct ncclDevComm, ginTypes) F(struct ncclDevComm, ginHandles) F(struct ncclDevComm, ginSignalBase)         \
  F(struct ncclDevComm, ginSignalCount) F(struct ncclDevComm, ginCounterBase)                                   \
  F(struct ncclDevComm, ginCounterCount) F(struct ncclDevComm, ginSignalShadows)                                \
  S(struct ncclDevResourceRequirements) F(struct ncclDevResourceRequirements, next)                             \
  F(struct ncclDevResourceRequirements, bufferSize) F(struct ncclDevResourceRequirements, bufferAlign)           \
  F(struct ncclDevResourceRequirements, outBufferHandle) F(struct ncclDevResourceRequirements, ginSignalCount)   \
  F(struct ncclDevResourceRequirements, ginCounterCount) F(struct ncclDevResourceRequirements, outGinSignalStart) \
  F(struct ncclDevResourceRequirements, outGinCounterStart)                                                      \
  S(struct ncclTeamRequirements) F(struct ncclTeamRequirements, next) F(struct ncclTeamRequirements, team)       \
  F(struct ncclTeamRequirements, multimem) F(struct ncclTeamRequirements, outMultimemHandle)                     \
  S(struct ncclDevCommRequirements) F(struct ncclDevCommRequirements, resourceRequirementsList)                 \
  F(struct ncclDevCommRequirements, teamRequirementsList) F(struct ncclDevCommRequirements, lsaMultimem)         \
  F(struct ncclDevCommRequirements, barrierCount) F(struct ncclDevCommRequirements, lsaBarrierCount)            \
  F(struct ncclDevCommRequirements, railGinBarrierCount) F(struct ncclDevCommRequirements, lsaLLA2ABlockCount)  \
  F(struct ncclDevCommRequirements, lsaLLA2ASlotCount) F(struct ncclDevCommRequirements, ginForceEnable)        \
  F(struct ncclDevCommRequirements, ginContextCount) F(struct ncclDevCommRequirements, ginSignalCount)          \
  F(struct ncclDevCommRequirements, ginCounterCount)                                                             \
  S(devapi_gin_ctx) F(devapi_gin_ctx, nranks) F(devapi_gin_ctx, queueSize) F(devapi_gin_ctx, queues)              \
  F(devapi_gin_ctx, pis) F(devapi_gin_ctx, cis) F(devapi_gin_ctx, counters) F(devapi_gin_ctx, signals)

/* A proxy GIN descriptor as NVIDIA's header's bitfields lay it out
 * (devapi_layout_nvidia.cu), for the fields the GPU's put writes. */
typedef struct {
  int hasInline;
  unsigned op;
  unsigned long long size, srcOff, srcWin, dstOff, dstWin, inlineValue, signalValue;
  unsigned counterId, signalId;
} devapi_gfd_fields_t;

#define DEVAPI_SIZE(s) {"sizeof(" #s ")", sizeof(s)},
#define DEVAPI_FIELD(s, f) {"offsetof(" #s ", " #f ")", offsetof(s, f)},

#endif
