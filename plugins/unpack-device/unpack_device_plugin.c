/* The exported tables: mkcclNetDevicePlugin_v1 (type UNPACK, version 0x7)
 * and mkcclPluginInfo_v1. Handles follow NCCL's ncclNetGetDeviceHandle:
 * only the receive side of an UNPACK connection gets one; the net plugin's
 * accept fills it with its own {meta, bounce_buf, head}. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "unpack_device.h"

static ncclDebugLogger_t unpack_device_logger;

void unpack_device_warn(const char* fmt, ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  if (unpack_device_logger) unpack_device_logger(NCCL_LOG_WARN, NCCL_NET, __FILE__, __LINE__, "%s", text);
  else fprintf(stderr, "%s\n", text);
}

static ncclResult_t unpack_device_handle_alloc(int isRecv, ncclNetDeviceHandle_v12_t** handle) {
  *handle = NULL;
  if (!isRecv) return ncclSuccess; /* the send side unpacks nothing */
  ncclNetDeviceHandle_v12_t* h = calloc(1, sizeof(*h));
  if (!h) return ncclSystemError;
  h->netDeviceType = NCCL_NET_DEVICE_UNPACK;
  h->netDeviceVersion = UNPACK_DEVICE_REPORTED_VERSION;
  *handle = h;
  return ncclSuccess;
}

static int unpack_device_needs_proxy_progress(const ncclNetDeviceHandle_v12_t* handle) {
  return handle && handle->needsProxyProgress;
}

static ncclResult_t unpack_device_handle_free(ncclNetDeviceHandle_v12_t* handle) {
  free(handle);
  return ncclSuccess;
}

static ncclResult_t unpack_device_host(ncclNetDeviceHandle_v12_t* handle, void* dst, size_t maxBytes, size_t* bytes) {
  if (!handle || handle->netDeviceType != NCCL_NET_DEVICE_UNPACK) {
    unpack_device_warn("unpack-device: receive on a handle that is not UNPACK");
    return ncclInternalError;
  }
  return unpack_host_unpack(handle->handle, dst, maxBytes, bytes);
}

__attribute__((visibility("default"))) const mkcclNetDevice_v1 mkcclNetDevicePlugin_v1 = {
    .size = sizeof(mkcclNetDevice_v1),
    .abiVersion = MKCCL_NET_DEVICE_ABI_V1,
    .name = "unpack-device",
    .type = NCCL_NET_DEVICE_UNPACK,
    .version = UNPACK_DEVICE_REPORTED_VERSION,
    .handleAlloc = unpack_device_handle_alloc,
    .needsProxyProgress = unpack_device_needs_proxy_progress,
    .handleFree = unpack_device_handle_free,
    .hostUnpack = unpack_device_host,
    .deviceCode = unpack_device_code,
};

static void unpack_device_bind(const mkcclServices_v1* services) {
  unpack_device_logger = services ? services->log : NULL;
}

__attribute__((visibility("default"))) const mkcclPluginInfo_v1_t mkcclPluginInfo_v1 = {
    sizeof(mkcclPluginInfo_v1_t), MKCCL_PLUGIN_ABI_VERSION, "unpack-device", "0.1.0", NULL, 0, unpack_device_bind};
