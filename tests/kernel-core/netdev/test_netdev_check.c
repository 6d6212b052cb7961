/* What the core accepts of a net-device plugin table before running any of
 * its code (netdev_plugin_check): the exact UNPACK version, known types,
 * complete tables. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "netdev/netdev.h"

static ncclResult_t alloc_none(int isRecv, ncclNetDeviceHandle_v12_t** h) {
  (void)isRecv;
  *h = NULL;
  return ncclSuccess;
}
static int no_progress(const ncclNetDeviceHandle_v12_t* h) {
  (void)h;
  return 0;
}
static ncclResult_t free_none(ncclNetDeviceHandle_v12_t* h) {
  (void)h;
  return ncclSuccess;
}
static ncclResult_t unpack_none(ncclNetDeviceHandle_v12_t* h, void* dst, size_t max, size_t* bytes) {
  (void)h, (void)dst, (void)max;
  *bytes = 0;
  return ncclSuccess;
}

static mkcclNetDevice_v1 table(ncclNetDeviceType type, int version) {
  mkcclNetDevice_v1 d = {sizeof(mkcclNetDevice_v1), MKCCL_NET_DEVICE_ABI_V1, "t", type, version,
                         alloc_none, no_progress, free_none, unpack_none, NULL};
  return d;
}

static void expect(const mkcclNetDevice_v1* d, const char* why) {
  char got[512];
  netdev_plugin_check(d, got, sizeof(got));
  if (!why) CHECK_MSG(got[0] == '\0', "refused: %s", got);
  else CHECK_STR_CONTAINS(got, why);
}

int main(void) {
  mkcclNetDevice_v1 d = table(NCCL_NET_DEVICE_UNPACK, 0x7);
  expect(&d, NULL);
  d = table(NCCL_NET_DEVICE_HOST, 0);
  d.hostUnpack = NULL;
  expect(&d, NULL);
  /* Exactly 0x7: older and newer alike are refused. */
  d = table(NCCL_NET_DEVICE_UNPACK, 0x6);
  expect(&d, "reports UNPACK version 0x6, this build takes exactly 0x7: refused, HOST is used instead");
  d = table(NCCL_NET_DEVICE_UNPACK, 0x8);
  expect(&d, "reports UNPACK version 0x8");
  d = table((ncclNetDeviceType)2, 0x7);
  expect(&d, "unknown net device type 2");
  d = table(NCCL_NET_DEVICE_UNPACK, 0x7);
  d.hostUnpack = NULL;
  expect(&d, "UNPACK without a hostUnpack");
  d = table(NCCL_NET_DEVICE_UNPACK, 0x7);
  d.size = sizeof(d) - sizeof(void*);
  expect(&d, "malformed mkcclNetDevicePlugin_v1");
  d = table(NCCL_NET_DEVICE_UNPACK, 0x7);
  d.abiVersion = 2;
  expect(&d, "malformed mkcclNetDevicePlugin_v1 (size");
  d = table(NCCL_NET_DEVICE_UNPACK, 0x7);
  d.handleAlloc = NULL;
  expect(&d, "malformed");
  printf("test_netdev_check: OK\n");
  return 0;
}
