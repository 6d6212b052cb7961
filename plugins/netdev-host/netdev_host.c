/* netdev-host: the HOST net device type, the trivial one. Received data is
 * already where the executor reads it: no handle, no proxy obligations, no
 * unpack, no device code. It exists so that the core treats every type the
 * same way (a plugin per type) and HOST is what a refused type falls to. */
#include <stddef.h>

#include "net-device/mkccl_net_device_v1.h"

static ncclResult_t netdev_host_handle_alloc(int isRecv, ncclNetDeviceHandle_v12_t** handle) {
  (void)isRecv;
  *handle = NULL;
  return ncclSuccess;
}

static int netdev_host_needs_proxy_progress(const ncclNetDeviceHandle_v12_t* handle) {
  (void)handle;
  return 0;
}

static ncclResult_t netdev_host_handle_free(ncclNetDeviceHandle_v12_t* handle) {
  (void)handle;
  return ncclSuccess;
}

__attribute__((visibility("default"))) const mkcclNetDevice_v1 mkcclNetDevicePlugin_v1 = {
    .size = sizeof(mkcclNetDevice_v1),
    .abiVersion = MKCCL_NET_DEVICE_ABI_V1,
    .name = "netdev-host",
    .type = NCCL_NET_DEVICE_HOST,
    .version = 0,
    .handleAlloc = netdev_host_handle_alloc,
    .needsProxyProgress = netdev_host_needs_proxy_progress,
    .handleFree = netdev_host_handle_free,
    .hostUnpack = NULL,
    .deviceCode = NULL,
};

__attribute__((visibility("default"))) const mkcclPluginInfo_v1_t mkcclPluginInfo_v1 = {
    sizeof(mkcclPluginInfo_v1_t), MKCCL_PLUGIN_ABI_VERSION, "netdev-host", "0.1.0", NULL, 0, NULL};
