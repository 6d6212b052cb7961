/* Device communicators of NCCL's device API: made from requirements (LSA
 * barriers, resource buffers, LL all-to-all slots) for kernels that load
 * and store into their LSA peers' windows. Every resource buffer lives in
 * one window per device communicator, zeroed, its buffers at 128-byte
 * handles. GIN, the network side, runs through mkccl's proxy backend
 * (devcomm_gin.c); multimem (NVLink multicast) is not built: asking for it
 * is an error that says so. */
#include <stddef.h>
#include <string.h>

#include "api/api.h"
#include "api/devcomm.h"
#include "api/device_api.h"
#include "api/window.h"
#include "base/err.h"
#include "bootstrap/bootstrap.h"
#include "comm/comm.h"
#include "cuda/vmm.h"

#define PROPS_MAGIC 0xcafebeefu

/* NCCL's reciprocal for fast division by x in device code. */
static uint32_t devcomm_rcp32(uint32_t x) { return UINT32_MAX / x + ((x & (x - 1)) == 0); }

MK_API(ncclResult_t, LsaBarrierCreateRequirement, ncclTeam_t team, int nBarriers, ncclLsaBarrierHandle_t* outHandle,
       ncclDevResourceRequirements_t* outReq) {
  const char* fn = "ncclLsaBarrierCreateRequirement";
  if (!outHandle || !outReq) return MK_FAIL(ncclInvalidArgument, "%s: outHandle or outReq is NULL", fn);
  if (nBarriers < 0 || team.nRanks < 0)
    return MK_FAIL(ncclInvalidArgument, "%s: %d barriers over a team of %d ranks", fn, nBarriers, team.nRanks);
  /* Per barrier: the multimem and unicast epochs, the multimem inbox, and
   * one unicast inbox per team rank (lsa_barrier__types.h reads them so). */
  memset(outReq, 0, sizeof(*outReq));
  outReq->bufferSize = (size_t)(3 * nBarriers + nBarriers * team.nRanks) * sizeof(uint32_t);
  outReq->bufferAlign = sizeof(uint32_t);
  outReq->outBufferHandle = &outHandle->bufHandle;
  outHandle->nBarriers = nBarriers;
  return ncclSuccess;
}

MK_API(ncclResult_t, LLA2ACreateRequirement, int nBlocks, int nSlots, ncclLLA2AHandle_t* outHandle,
       ncclDevResourceRequirements_t* outReq) {
  const char* fn = "ncclLLA2ACreateRequirement";
  if (!outHandle || !outReq) return MK_FAIL(ncclInvalidArgument, "%s: outHandle or outReq is NULL", fn);
  if (nBlocks < 0 || nSlots < 0)
    return MK_FAIL(ncclInvalidArgument, "%s: %d blocks of %d slots", fn, nBlocks, nSlots);
  /* Per block: one 16-byte epoch line and two sets (epoch parity) of slots. */
  memset(outReq, 0, sizeof(*outReq));
  outReq->bufferSize = (size_t)nBlocks * (1 + 2 * (size_t)nSlots) * 16;
  outReq->bufferAlign = 16;
  outReq->outBufferHandle = &outHandle->bufHandle;
  outHandle->nSlots = (uint32_t)nSlots;
  return ncclSuccess;
}

/* Slots an LL all-to-all needs: one 16-byte line carries 8 bytes of data. */
MK_API(int, LLA2ACalcSlots, int maxElts, int maxEltSize) { return maxElts * ((maxEltSize + 7) / 8); }

MK_API(ncclResult_t, DevCommCreate, ncclComm_t comm, ncclDevCommRequirements_t const* reqs,
       ncclDevComm_t* outDevComm) {
  const char* fn = "ncclDevCommCreate";
  MK_CHECK(comm_check_usable(comm, fn));
  if (!reqs) return MK_FAIL(ncclInvalidArgument, "%s: reqs is NULL", fn);
  if (!outDevComm) return MK_FAIL(ncclInvalidArgument, "%s: outDevComm is NULL", fn);
  if (reqs->lsaBarrierCount < 0 || reqs->barrierCount < 0 || reqs->railGinBarrierCount < 0)
    return MK_FAIL(ncclInvalidArgument, "%s: negative barrier count", fn);
  int lsaRank, lsaSize;
  api_window_lsa(comm, &lsaRank, &lsaSize);
  const char* refused = api_devcomm_refusal(reqs);
  if (refused) return MK_FAIL(ncclInvalidUsage, "%s: %s", fn, refused);
  int gin = api_devcomm_gin_wanted(reqs, lsaSize == comm->nRanks);
  if (gin) MK_CHECK(api_devcomm_gin_backend(fn));
  if (comm->cudaDev < 0)
    return MK_FAIL(ncclInvalidUsage, "%s: rank %d is a host communicator: device communicators need a GPU", fn,
                   comm->rank);

  ncclDevComm_t d;
  memset(&d, 0, sizeof(d));
  d.rank = comm->rank;
  d.nRanks = comm->nRanks;
  d.nRanks_rcp32 = devcomm_rcp32((uint32_t)comm->nRanks);
  d.lsaRank = lsaRank;
  d.lsaSize = lsaSize;
  d.lsaSize_rcp32 = devcomm_rcp32((uint32_t)lsaSize);

  /* Our LSA barrier first, the rail barrier (a kernel's world barrier
   * keeps its epochs even with no peer to signal; with GIN its signals
   * too), then the user's buffers (the list is theirs: only linked to,
   * never changed). */
  ncclDevResourceRequirements_t lsaBar, railBar;
  int nLsaBarriers = reqs->lsaBarrierCount > reqs->barrierCount ? reqs->lsaBarrierCount : reqs->barrierCount;
  int nRailBarriers = reqs->railGinBarrierCount > reqs->barrierCount ? reqs->railGinBarrierCount : reqs->barrierCount;
  ncclTeam_t lsa = {lsaSize, lsaRank, 1};
  MK_CHECK(pncclLsaBarrierCreateRequirement(lsa, nLsaBarriers, &d.lsaBarrier, &lsaBar));
  if (gin) {
    ncclTeam_t rail = {comm->nRanks / lsaSize, comm->rank / lsaSize, lsaSize};
    MK_CHECK(pncclGinBarrierCreateRequirement(comm, rail, nRailBarriers, &d.railGinBarrier, &railBar));
  } else {
    api_devcomm_rail_barrier(nRailBarriers, reqs->ginSignalCount, &d.railGinBarrier, &railBar);
  }
  lsaBar.next = &railBar;
  railBar.next = reqs->resourceRequirementsList;
  size_t total = 0;
  int nSignals = 0, nCounters = 0;
  MK_CHECK(api_devcomm_layout(&lsaBar, &total, fn));
  if (gin) MK_CHECK(api_devcomm_gin_ids(&lsaBar, reqs->ginSignalCount, reqs->ginCounterCount, &nSignals, &nCounters, fn));
  if (gin && total == 0) total = MK_RESOURCE_UNIT; /* the engine's home: DevCommDestroy finds it there */

  const exec_ops_t* ops = comm->dp.exec.ops;
  void* callerCtx = NULL;
  MK_CHECK(ops->ctx_save(&callerCtx));
  ncclResult_t res = ops->bind(comm);
  if (res == ncclSuccess) res = ops->win_table(comm->dp.exec.state, (void**)&d.windowTable);
  ops->ctx_restore(callerCtx);
  if (res != ncclSuccess) return res;
  if (total > 0) {
    api_window_t* w;
    MK_CHECK(api_window_create(comm, NULL, total, 0, 0, &w));
    w->internal = 1;
    d.resourceWindow = w->handle;
    d.resourceWindow_inlined.lsaFlatBase = w->exec.lsaFlatBase;
    d.resourceWindow_inlined.stride4G = w->exec.stride4G;
    d.resourceWindow_inlined.lsaRank = lsaRank;
    d.resourceWindow_inlined.worldRank = comm->rank;
    for (int c = 0; c < MK_GIN_MAX_CONTEXTS; c++) d.resourceWindow_inlined.ginWins[c] = (void*)(uintptr_t)w->ginHandle;
    if (gin) {
      res = ops->ctx_save(&callerCtx);
      if (res == ncclSuccess && (res = ops->bind(comm)) == ncclSuccess)
        res = api_devcomm_gin_create(comm, reqs->ginContextCount, nSignals, nCounters, &d, &w->gin);
      ops->ctx_restore(callerCtx);
      if (res != ncclSuccess) {
        api_window_destroy(w);
        return res;
      }
    }
  }
  *outDevComm = d;
  return ncclSuccess;
}

MK_API(ncclResult_t, DevCommDestroy, ncclComm_t comm, ncclDevComm_t const* devComm) {
  const char* fn = "ncclDevCommDestroy";
  MK_CHECK(comm_check(comm, fn));
  if (!devComm) return MK_FAIL(ncclInvalidArgument, "%s: devComm is NULL", fn);
  if (!devComm->resourceWindow) return ncclSuccess; /* nothing was allocated for it */
  api_window_t* w = api_window_find(comm, devComm->resourceWindow);
  if (!w || !w->internal)
    return MK_FAIL(ncclInvalidArgument, "%s: devComm was not made by ncclDevCommCreate on this communicator", fn);
  ncclResult_t res = api_devcomm_gin_stop(comm, w);
  api_window_destroy(w);
  return res;
}

MK_API(ncclResult_t, GinOutboxCreateRequirement, int nBlocks, int sizeLog2, ncclGinOutboxHandle_t* outHandle,
       ncclDevResourceRequirements_t* outReq) {
  (void)nBlocks, (void)sizeLog2, (void)outHandle, (void)outReq;
  return api_not_implemented("ncclGinOutboxCreateRequirement", "GIN, the device API's network side");
}

MK_API(ncclResult_t, GinInboxA2ACreateRequirement, ncclTeam_t peers, int nBlocks, int sizeLog2,
       ncclGinInboxA2AHandle_t* outHandle, ncclDevResourceRequirements_t* outReq) {
  (void)peers, (void)nBlocks, (void)sizeLog2, (void)outHandle, (void)outReq;
  return api_not_implemented("ncclGinInboxA2ACreateRequirement", "GIN, the device API's network side");
}

#define MULTIMEM_NEVER "mkccl never creates NVLink multicast objects (multimem)"

MK_API(ncclResult_t, GetLsaMultimemDevicePointer, ncclWindow_t window, size_t offset, void** outPtr) {
  (void)window, (void)offset, (void)outPtr;
  return MK_FAIL(ncclInvalidUsage, "ncclGetLsaMultimemDevicePointer: %s", MULTIMEM_NEVER);
}

MK_API(ncclResult_t, GetMultimemDevicePointer, ncclWindow_t window, size_t offset, ncclMultimemHandle_t multimem,
       void** outPtr) {
  (void)window, (void)offset, (void)multimem, (void)outPtr;
  return MK_FAIL(ncclInvalidUsage, "ncclGetMultimemDevicePointer: %s", MULTIMEM_NEVER);
}

/* LSA peer i's copy of `window` at `offset`, as a kernel would compute it. */
static ncclResult_t devcomm_lsa_pointer(ncclWindow_t window, size_t offset, int lsaPeer, void** outPtr, const char* fn) {
  if (!outPtr) return MK_FAIL(ncclInvalidArgument, "%s: outPtr is NULL", fn);
  api_window_t* w = window ? api_window_find(NULL, window) : NULL;
  if (!w || !w->mapped)
    return MK_FAIL(ncclInvalidArgument, "%s: %p is not a window of a GPU communicator", fn, (void*)window);
  int lsaRank, lsaSize;
  api_window_lsa(w->comm, &lsaRank, &lsaSize);
  if (lsaPeer < 0 || lsaPeer >= lsaSize)
    return MK_FAIL(ncclInvalidArgument, "%s: peer %d is not in the LSA team of rank %d (%d ranks)", fn, lsaPeer,
                   w->comm->rank, lsaSize);
  if (offset >= w->size) return MK_FAIL(ncclInvalidArgument, "%s: offset %zu past the window (%zu bytes)", fn, offset, w->size);
  *outPtr = w->exec.lsaFlatBase + ((uint64_t)lsaPeer * w->exec.stride4G << 32) + offset;
  return ncclSuccess;
}

MK_API(ncclResult_t, GetLsaDevicePointer, ncclWindow_t window, size_t offset, int lsaRank, void** outPtr) {
  return devcomm_lsa_pointer(window, offset, lsaRank, outPtr, "ncclGetLsaDevicePointer");
}

MK_API(ncclResult_t, GetPeerDevicePointer, ncclWindow_t window, size_t offset, int peer, void** outPtr) {
  api_window_t* w = window ? api_window_find(NULL, window) : NULL;
  int lsaRank = 0, lsaSize = 1;
  if (w) api_window_lsa(w->comm, &lsaRank, &lsaSize);
  int lsaPeer = w ? lsaRank + (peer - w->comm->rank) : -1;
  return devcomm_lsa_pointer(window, offset, lsaPeer, outPtr, "ncclGetPeerDevicePointer");
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
  /* LSA windows, barriers and LL A2A where windows can be mapped; GIN
   * through the proxy wherever a net plugin is bound too. */
  props->deviceApiSupport = comm->cudaDev >= 0 && cuda_vmm_fd_supported(comm->cudaDev);
  props->multimemSupport = false;
  int ginType = props->deviceApiSupport && comm->dp.net.api ? mkGinTypeProxy : mkGinTypeNone;
  if (props->version > NCCL_VERSION(2, 29, 3)) {
    if (PROPS_HAS(props, ginType)) props->ginType = ginType;
    if (PROPS_HAS(props, nLsaTeams)) props->nLsaTeams = comm->nRanks / api_team_lsa_size(comm);
    if (PROPS_HAS(props, hostRmaSupport)) props->hostRmaSupport = false;
    if (PROPS_HAS(props, railedGinType)) props->railedGinType = ginType;
  }
  return ncclSuccess;
}
