/* What the core lends transports: memory both executors and the proxy see,
 * the chosen net plugin, parameters, the abort flag. */
#include <stdlib.h>
#include <string.h>

#include "api/mem_reg.h"
#include "base/err.h"
#include "base/log.h"
#include "base/param.h"
#include "comm/comm.h"
#include "dp/dp_topo.h"
#include "netdev/netdev.h"
#include "topo/topo.h"
#include "transport/transport.h"

static ncclResult_t services_host_alloc(void* ctx, size_t bytes, void** ptr) {
  (void)ctx;
  void* p = NULL;
  if (posix_memalign(&p, 4096, bytes ? bytes : 1) != 0)
    return MK_FAIL(ncclSystemError, "transport: cannot allocate %zu bytes of host memory", bytes);
  memset(p, 0, bytes);
  *ptr = p;
  return ncclSuccess;
}

static ncclResult_t services_host_free(void* ctx, void* ptr) {
  (void)ctx;
  free(ptr);
  return ncclSuccess;
}

static ncclResult_t services_device_alloc(void* ctx, size_t bytes, void** ptr) {
  (void)ctx, (void)bytes, (void)ptr;
  return MK_FAIL(ncclInvalidUsage, "transport: device memory requested on a host rank");
}

static ncclResult_t services_device_free(void* ctx, void* ptr) {
  (void)ctx, (void)ptr;
  return ncclSuccess;
}

static const void* services_net(void* ctx, void** netContext) {
  struct ncclComm* comm = ctx;
  if (netContext) *netContext = comm->dp.net.context;
  return comm->dp.net.api;
}

static ncclResult_t services_mem_reg_find(void* ctx, const void* ptr, size_t bytes, void** base, size_t* size) {
  return mem_reg_find(ctx, ptr, bytes, base, size);
}

static int services_net_gpu_path(void* ctx, int dev) { return dp_topo_gpu_nic_path(ctx, dev); }

ncclResult_t transport_services_fill(struct ncclComm* comm, mkcclTransportServices_v1* s) {
  memset(s, 0, sizeof(*s));
  s->size = sizeof(*s);
  s->log = log_write;
  s->ctx = comm;
  s->hostAlloc = services_host_alloc;
  s->hostFree = services_host_free;
  s->deviceAlloc = services_device_alloc;
  s->deviceFree = services_device_free;
  s->net = services_net;
  s->paramInt64 = param_int_lookup;
  s->abortFlag = comm->abortFlag;
  s->rank = comm->rank;
  s->nRanks = comm->nRanks;
  s->cudaDev = -1;
  s->p2pLevel = -1;
  s->p2pRead = (int)param_NCCL_P2P_READ_ENABLE();
  s->p2pDirect = !param_NCCL_P2P_DIRECT_DISABLE();
  const char* level = param_NCCL_P2P_LEVEL();
  if (level && *level && topo_p2p_level_parse(level, &s->p2pLevel) != 0) s->p2pLevel = -1;
  s->netGdrLevel = -1;
  s->netGdrRead = (int)param_NCCL_NET_GDR_READ();
  const char* gdrLevel = param_NCCL_NET_GDR_LEVEL();
  if (gdrLevel && *gdrLevel && topo_p2p_level_parse(gdrLevel, &s->netGdrLevel) != 0) {
    MK_WARN("Invalid NCCL_NET_GDR_LEVEL '%s' (LOC, PIX, PXB, PHB, SYS ... or 0-5): ignored", gdrLevel);
    s->netGdrLevel = -1;
  }
  s->netDeviceHandleAlloc = netdev_service_handle_alloc;
  s->netDeviceNeedsProxyProgress = netdev_service_needs_proxy_progress;
  s->netDeviceHandleFree = netdev_service_handle_free;
  s->memRegFind = services_mem_reg_find;
  s->netGpuPath = services_net_gpu_path;
  if (comm->cudaDev >= 0) MK_CHECK(transport_services_gpu_fill(comm, s));
  return ncclSuccess;
}
