/* GIN of device communicators: the proxy backend's engine (gin/gin.h) made
 * for a device communicator and the fields of ncclDevComm that lead its
 * kernels to it. Only the proxy backend is built: its descriptors go
 * through mkccl's own thread and the communicator's net plugin, so GIN
 * reaches every rank a net plugin reaches, whatever the NIC. */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/devcomm.h"
#include "api/window.h"
#include "base/err.h"
#include "base/param.h"
#include "comm/comm.h"
#include "gin/gin.h"
#include "gin/gin_mem.h"

struct api_devcomm_gin {
  gin_engine_t* engine;
  gin_mem_ops_t mem;
};

int api_devcomm_gin_wanted(const ncclDevCommRequirements_t* reqs, int oneLsaTeam) {
  /* Rail barriers alone on one LSA team need none: the rail is this rank. */
  if (!oneLsaTeam || reqs->ginForceEnable || reqs->ginSignalCount > 0 || reqs->ginCounterCount > 0) return 1;
  for (const ncclDevResourceRequirements_t* r = reqs->resourceRequirementsList; r; r = r->next)
    if (r->ginSignalCount > 0 || r->ginCounterCount > 0) return 1;
  return 0;
}

ncclResult_t api_devcomm_gin_backend(const char* fn) {
  int64_t type = param_NCCL_GIN_TYPE();
  if (type == -1 || type == GIN_TYPE_PROXY) return ncclSuccess;
  if (type == GIN_TYPE_GDAKI)
    return MK_FAIL(ncclInvalidUsage, "%s: NCCL_GIN_TYPE=3 asks for device-direct GIN (GDAKI), which mkccl does not "
                   "build: its GIN is the proxy backend (NCCL_GIN_TYPE=2, the default), over any net plugin", fn);
  return MK_FAIL(ncclInvalidArgument, "%s: NCCL_GIN_TYPE=%lld is no GIN backend (2: proxy)", fn, (long long)type);
}

MK_API(ncclResult_t, GinBarrierCreateRequirement, ncclComm_t comm, ncclTeam_t team, int nBarriers,
       ncclGinBarrierHandle_t* outHandle, ncclDevResourceRequirements_t* outReq) {
  const char* fn = "ncclGinBarrierCreateRequirement";
  (void)comm; /* the layout depends on the team alone */
  if (!outHandle || !outReq) return MK_FAIL(ncclInvalidArgument, "%s: outHandle or outReq is NULL", fn);
  if (nBarriers < 0 || nBarriers > 0xffff || team.nRanks < 0)
    return MK_FAIL(ncclInvalidArgument, "%s: %d barriers over a team of %d ranks", fn, nBarriers, team.nRanks);
  /* Per barrier one signal, and per barrier and context the epoch a
   * session resumes from (gin_barrier__funcs.h reads them so). */
  memset(outReq, 0, sizeof(*outReq));
  outReq->bufferSize = (size_t)nBarriers * MK_GIN_MAX_CONTEXTS * sizeof(uint32_t);
  outReq->bufferAlign = sizeof(uint32_t);
  outReq->outBufferHandle = &outHandle->bufHandle;
  outReq->ginSignalCount = nBarriers;
  outReq->outGinSignalStart = &outHandle->signal0;
  return ncclSuccess;
}

/* The engine's thread failed: the communicator's async error, which
 * ncclCommGetAsyncError reports (PyTorch's watchdog polls it). */
static void devcomm_gin_failed(void* comm, ncclResult_t res) { comm_async_error_set(comm, res); }

ncclResult_t api_devcomm_gin_create(struct ncclComm* comm, int contexts, int nSignals, int nCounters,
                                    ncclDevComm_t* d, api_devcomm_gin_t** out) {
  api_devcomm_gin_t* g = calloc(1, sizeof(*g));
  if (!g) return MK_FAIL(ncclSystemError, "ncclDevCommCreate: out of memory");
  ncclResult_t res = gin_mem_cuda_open(comm->dp.exec.gpuCtx, &g->mem);
  if (res != ncclSuccess) {
    free(g);
    return res;
  }
  if (contexts < 1) contexts = 1;
  if (contexts > MK_GIN_MAX_CONTEXTS) contexts = MK_GIN_MAX_CONTEXTS;
  gin_config_t cfg = {
      .rank = comm->rank,
      .nRanks = comm->nRanks,
      .bootstrap = comm->bootstrap,
      .net = comm->dp.net.api,
      .netCtx = comm->dp.net.context,
      .netDev = comm->nNetDevs > 0 ? comm->netDevs[0] : 0,
      .abortFlag = comm->abortFlag,
      .nContexts = contexts,
      .nSignals = nSignals,
      .nCounters = nCounters,
      .mem = g->mem,
      .winFind = api_window_gin_find,
      .winFindArg = comm,
      .onFail = devcomm_gin_failed,
      .onFailArg = comm,
  };
  res = gin_engine_create(&cfg, &g->engine);
  if (res != ncclSuccess) {
    gin_mem_cuda_close(&g->mem);
    free(g);
    return res;
  }
  d->ginContextCount = (uint8_t)contexts;
  for (int c = 0; c < contexts; c++) {
    d->ginTypes[c] = GIN_TYPE_PROXY;
    d->ginHandles[c] = gin_engine_handle(g->engine, c);
  }
  d->ginSignalBase = 0;
  d->ginSignalCount = nSignals;
  d->ginCounterBase = 0;
  d->ginCounterCount = nCounters;
  d->ginSignalShadows = gin_engine_shadows(g->engine);
  *out = g;
  return ncclSuccess;
}

ncclResult_t api_devcomm_gin_destroy(api_devcomm_gin_t* g) {
  if (!g) return ncclSuccess;
  ncclResult_t res = gin_engine_destroy(g->engine);
  gin_mem_cuda_close(&g->mem);
  free(g);
  return res;
}

ncclResult_t api_devcomm_gin_stop(struct ncclComm* comm, api_window_t* w) {
  if (!w->gin) return ncclSuccess;
  const exec_ops_t* ops = comm->dp.exec.ops;
  void* callerCtx = NULL;
  ncclResult_t res = ops->ctx_save(&callerCtx);
  if (res == ncclSuccess && (res = ops->bind(comm)) == ncclSuccess) res = api_devcomm_gin_destroy(w->gin);
  ops->ctx_restore(callerCtx);
  w->gin = NULL;
  return res;
}
