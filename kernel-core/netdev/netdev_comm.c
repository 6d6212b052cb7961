/* A communicator's net device type, the services the net transport calls
 * with it, and the host executor's unpack (netdev.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/err.h"
#include "comm/comm.h"
#include "netdev/netdev.h"
#include "netdev/netdev_link.h"

static uint64_t netdev_stat_receives, netdev_stat_bytes;

/* GPU communicators run the plugin's device code: the core's collective
 * kernels (their UNPACK variant, relocatable) linked with it; the cubin is
 * the one the GPU executor loads for this communicator (dp->net.devCubin). */
static void netdev_gpu_link(dp_state_t* dp, const mkcclNetDevice_v1* d, char* why, size_t size) {
  const mkcclNetDeviceCode_v1* code = d->deviceCode ? d->deviceCode() : NULL;
  size_t coreSize = 0;
  const void* core = netdev_core_kernels(&coreSize);
  if (!code || !code->ltoir) {
    snprintf(why, size, "plugin '%s' has no device code (built without nvcc)", d->name);
    return;
  }
  if (!core) {
    snprintf(why, size, "this build of the core has no device code to link with (built without nvcc)");
    return;
  }
  netdev_link_input_t in[2] = {{core, coreSize, "mkccl-kernels"}, {code->ltoir, code->ltoirSize, d->name}};
  netdev_link_source_t source;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (netdev_link(in, 2, code->arch ? code->arch : "sm_90", NETDEV_LINK_RELOCATABLE, &dp->net.devCubin,
                  &dp->net.devCubinSize, &source) != ncclSuccess) {
    snprintf(why, size, "device code link failed: %s", err_last_get());
    return;
  }
  MK_INFO(NCCL_INIT | NCCL_NET, "NETDEV: collective kernels with '%s' device code: %s in %.1f ms", d->name,
          source == NETDEV_LINK_CACHED ? "from the cache" : "linked", mk_ms_since(&t0));
}

ncclResult_t netdev_comm_open(struct ncclComm* comm) {
  dp_state_t* dp = &comm->dp;
  dp->net.devType = NCCL_NET_DEVICE_HOST;
  dp->net.device = NULL;
  const ncclNet_v12_t* net = dp->net.api;
  if (!net) return ncclSuccess;
  ncclNetProperties_v12_t props;
  memset(&props, 0, sizeof(props));
  if (net->getProperties(0, &props) != ncclSuccess || props.netDeviceType == NCCL_NET_DEVICE_HOST)
    return ncclSuccess;
  MK_CHECK(netdev_plugins_load());
  char why[512] = "";
  const mkcclNetDevice_v1* d = netdev_plugin_for(props.netDeviceType);
  if (props.netDeviceType != NCCL_NET_DEVICE_UNPACK)
    snprintf(why, sizeof(why), "unknown net device type %d", (int)props.netDeviceType);
  else if (props.netDeviceVersion != NCCL_NET_DEVICE_UNPACK_VERSION)
    snprintf(why, sizeof(why), "the net plugin reports UNPACK version 0x%x, this build takes exactly 0x%x",
             props.netDeviceVersion, NCCL_NET_DEVICE_UNPACK_VERSION);
  else if (!d)
    snprintf(why, sizeof(why), "no net-device plugin of type UNPACK was taken (see the NETDEV/Plugin lines)");
  else if (comm->cudaDev >= 0)
    netdev_gpu_link(dp, d, why, sizeof(why));
  if (why[0]) {
    MK_INFO(NCCL_INIT | NCCL_NET, "NETDEV: rank %d: UNPACK refused: %s; the HOST path is used", comm->rank, why);
    return ncclSuccess;
  }
  dp->net.devType = NCCL_NET_DEVICE_UNPACK;
  dp->net.device = d;
  MK_INFO(NCCL_INIT | NCCL_NET, "NETDEV: rank %d: net receives use UNPACK 0x%x through '%s' (%s unpack)", comm->rank,
          d->version, d->name, comm->cudaDev >= 0 ? "device" : "host");
  return ncclSuccess;
}

void netdev_comm_close(struct ncclComm* comm) {
  free(comm->dp.net.devCubin);
  comm->dp.net.devCubin = NULL;
  comm->dp.net.devCubinSize = 0;
  comm->dp.net.devType = NCCL_NET_DEVICE_HOST;
  comm->dp.net.device = NULL;
}

ncclResult_t netdev_service_handle_alloc(void* ctx, int isRecv, ncclNetDeviceHandle_v12_t** handle) {
  struct ncclComm* comm = ctx;
  const mkcclNetDevice_v1* d = comm->dp.net.device;
  *handle = NULL;
  if (!d) return ncclSuccess;
  ncclResult_t res = d->handleAlloc(isRecv, handle);
  if (res != ncclSuccess) return MK_FAIL(res, "NETDEV: '%s' could not allocate a device handle (%d)", d->name, res);
  return ncclSuccess;
}

int netdev_service_needs_proxy_progress(void* ctx, const ncclNetDeviceHandle_v12_t* handle) {
  struct ncclComm* comm = ctx;
  const mkcclNetDevice_v1* d = comm->dp.net.device;
  return handle && d && d->needsProxyProgress(handle);
}

ncclResult_t netdev_service_handle_free(void* ctx, ncclNetDeviceHandle_v12_t* handle) {
  struct ncclComm* comm = ctx;
  const mkcclNetDevice_v1* d = comm->dp.net.device;
  if (!handle) return ncclSuccess;
  return d ? d->handleFree(handle) : ncclSuccess;
}

ncclResult_t netdev_host_unpack(void* handle, void* dst, size_t maxBytes) {
  ncclNetDeviceHandle_v12_t* h = handle;
  const mkcclNetDevice_v1* d = netdev_plugin_for(h->netDeviceType);
  if (!d || !d->hostUnpack)
    return MK_FAIL(ncclInternalError, "NETDEV: a receive with a type %d handle and no plugin to unpack it",
                   (int)h->netDeviceType);
  size_t bytes = 0;
  ncclResult_t res = d->hostUnpack(h, dst, maxBytes, &bytes);
  if (res != ncclSuccess) return MK_FAIL(res, "NETDEV: '%s' failed to unpack a receive (%d)", d->name, res);
  __atomic_add_fetch(&netdev_stat_receives, 1, __ATOMIC_RELAXED);
  __atomic_add_fetch(&netdev_stat_bytes, bytes, __ATOMIC_RELAXED);
  return ncclSuccess;
}

void netdev_stats_get(uint64_t* receives, uint64_t* bytes) {
  if (receives) *receives = __atomic_load_n(&netdev_stat_receives, __ATOMIC_RELAXED);
  if (bytes) *bytes = __atomic_load_n(&netdev_stat_bytes, __ATOMIC_RELAXED);
}
