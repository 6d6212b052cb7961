/* Device communicators of NCCL's device API: created from requirements (LSA
 * and GIN barriers, resource buffers, LL all-to-all slots, GIN signals and
 * counters) for kernels that load and store into peers' windows. Not
 * implemented yet; exported so that programs linked against NCCL's device
 * API load, and ncclCommQueryProperties tells them it is not there. */
#include <stddef.h>

#include "api/api.h"
#include "api/device_api.h"
#include "base/err.h"
#include "comm/comm.h"

#define DEVICE_API "NCCL's device API"
#define PROPS_MAGIC 0xcafebeefu

MK_API(ncclResult_t, DevCommCreate, ncclComm_t comm, ncclDevCommRequirements_t const* reqs,
       ncclDevComm_t* outDevComm) {
  (void)comm, (void)reqs, (void)outDevComm;
  return api_not_implemented("ncclDevCommCreate", DEVICE_API);
}

MK_API(ncclResult_t, DevCommDestroy, ncclComm_t comm, ncclDevComm_t const* devComm) {
  (void)comm, (void)devComm;
  return api_not_implemented("ncclDevCommDestroy", DEVICE_API);
}

MK_API(ncclResult_t, LsaBarrierCreateRequirement, ncclTeam_t team, int nBarriers, ncclLsaBarrierHandle_t* outHandle,
       ncclDevResourceRequirements_t* outReq) {
  (void)team, (void)nBarriers, (void)outHandle, (void)outReq;
  return api_not_implemented("ncclLsaBarrierCreateRequirement", DEVICE_API);
}

MK_API(ncclResult_t, GinBarrierCreateRequirement, ncclComm_t comm, ncclTeam_t team, int nBarriers,
       ncclGinBarrierHandle_t* outHandle, ncclDevResourceRequirements_t* outReq) {
  (void)comm, (void)team, (void)nBarriers, (void)outHandle, (void)outReq;
  return api_not_implemented("ncclGinBarrierCreateRequirement", DEVICE_API);
}

MK_API(ncclResult_t, LLA2ACreateRequirement, int nBlocks, int nSlots, ncclLLA2AHandle_t* outHandle,
       ncclDevResourceRequirements_t* outReq) {
  (void)nBlocks, (void)nSlots, (void)outHandle, (void)outReq;
  return api_not_implemented("ncclLLA2ACreateRequirement", DEVICE_API);
}

/* Slots an LL all-to-all needs: one 8-byte line per started 8 bytes of each
 * element. */
MK_API(int, LLA2ACalcSlots, int maxElts, int maxEltSize) { return maxElts * ((maxEltSize + 7) / 8); }

MK_API(ncclResult_t, GinOutboxCreateRequirement, int nBlocks, int sizeLog2, ncclGinOutboxHandle_t* outHandle,
       ncclDevResourceRequirements_t* outReq) {
  (void)nBlocks, (void)sizeLog2, (void)outHandle, (void)outReq;
  return api_not_implemented("ncclGinOutboxCreateRequirement", DEVICE_API);
}

MK_API(ncclResult_t, GinInboxA2ACreateRequirement, ncclTeam_t peers, int nBlocks, int sizeLog2,
       ncclGinInboxA2AHandle_t* outHandle, ncclDevResourceRequirements_t* outReq) {
  (void)peers, (void)nBlocks, (void)sizeLog2, (void)outHandle, (void)outReq;
  return api_not_implemented("ncclGinInboxA2ACreateRequirement", DEVICE_API);
}

MK_API(ncclResult_t, GetLsaMultimemDevicePointer, ncclWindow_t window, size_t offset, void** outPtr) {
  (void)window, (void)offset, (void)outPtr;
  return api_not_implemented("ncclGetLsaMultimemDevicePointer", DEVICE_API);
}

MK_API(ncclResult_t, GetMultimemDevicePointer, ncclWindow_t window, size_t offset, ncclMultimemHandle_t multimem,
       void** outPtr) {
  (void)window, (void)offset, (void)multimem, (void)outPtr;
  return api_not_implemented("ncclGetMultimemDevicePointer", DEVICE_API);
}

MK_API(ncclResult_t, GetLsaDevicePointer, ncclWindow_t window, size_t offset, int lsaRank, void** outPtr) {
  (void)window, (void)offset, (void)lsaRank, (void)outPtr;
  return api_not_implemented("ncclGetLsaDevicePointer", DEVICE_API);
}

MK_API(ncclResult_t, GetPeerDevicePointer, ncclWindow_t window, size_t offset, int peer, void** outPtr) {
  (void)window, (void)offset, (void)peer, (void)outPtr;
  return api_not_implemented("ncclGetPeerDevicePointer", DEVICE_API);
}

/* Fields a caller's struct has room for (its size), as its version knows them. */
#define PROPS_HAS(p, field) ((p)->size >= offsetof(ncclCommProperties_t, field) + sizeof((p)->field))

MK_API(ncclResult_t, CommQueryProperties, ncclComm_t comm, ncclCommProperties_t* props) {
  const char* fn = "ncclCommQueryProperties";
  MK_CHECK(comm_check(comm, fn));
  if (!props) return MK_FAIL(ncclInvalidArgument, "%s: props is NULL", fn);
  MK_CHECK(comm_ensure_ready(comm, fn));
  if (props->magic != PROPS_MAGIC)
    return MK_FAIL(ncclInvalidUsage, "%s: ncclCommProperties_t not initialized via NCCL_COMM_PROPERTIES_INITIALIZER",
                   fn);
  if (props->version < NCCL_VERSION(2, 29, 0) || !PROPS_HAS(props, multimemSupport))
    return MK_FAIL(ncclInvalidArgument, "%s: ncclCommProperties_t of version %u and size %zu is not one NCCL made",
                   fn, props->version, props->size);
  props->rank = comm->rank;
  props->nRanks = comm->nRanks;
  props->cudaDev = comm->cudaDev;
  props->nvmlDev = -1; /* not known: NVML is not loaded */
  props->deviceApiSupport = false;
  props->multimemSupport = false;
  if (props->version > NCCL_VERSION(2, 29, 3)) {
    if (PROPS_HAS(props, ginType)) props->ginType = mkGinTypeNone;
    if (PROPS_HAS(props, nLsaTeams)) props->nLsaTeams = comm->nRanks / api_team_lsa_size(comm);
    if (PROPS_HAS(props, hostRmaSupport)) props->hostRmaSupport = false;
    if (PROPS_HAS(props, railedGinType)) props->railedGinType = mkGinTypeNone;
  }
  return ncclSuccess;
}
