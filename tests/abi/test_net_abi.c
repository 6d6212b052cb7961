/* The net ABI headers against NCCL's layouts: every property offset, the
 * position of each version's last function pointer, the device handle.
 * Real plugins cross this ABI, so a moved field is a broken plugin. */
#include <stddef.h>

#include "check.h"
#include "net/nccl_net.h"

#define OFF(type, field, expect) CHECK_EQ_INT(offsetof(type, field), expect)

static void check_props_common(void) {
  OFF(ncclNetProperties_v6_t, name, 0);
  OFF(ncclNetProperties_v6_t, pciPath, 8);
  OFF(ncclNetProperties_v6_t, guid, 16);
  OFF(ncclNetProperties_v6_t, ptrSupport, 24);
  OFF(ncclNetProperties_v6_t, speed, 28);
  OFF(ncclNetProperties_v6_t, port, 32);
  OFF(ncclNetProperties_v6_t, latency, 36);
  OFF(ncclNetProperties_v6_t, maxComms, 40);
  OFF(ncclNetProperties_v6_t, maxRecvs, 44);
  CHECK_EQ_INT(sizeof(ncclNetProperties_v6_t), 48);

  OFF(ncclNetProperties_v7_t, maxRecvs, 44);
  OFF(ncclNetProperties_v7_t, netDeviceType, 48);
  OFF(ncclNetProperties_v7_t, netDeviceVersion, 52);
  CHECK_EQ_INT(sizeof(ncclNetProperties_v7_t), 56);

  OFF(ncclNetProperties_v8_t, regIsGlobal, 28);
  OFF(ncclNetProperties_v8_t, speed, 32);
  OFF(ncclNetProperties_v8_t, maxRecvs, 48);
  OFF(ncclNetProperties_v8_t, netDeviceVersion, 56);
  CHECK_EQ_INT(sizeof(ncclNetProperties_v8_t), 64);
}

static void check_props_vnic(void) {
  OFF(ncclNetProperties_v9_t, forceFlush, 32);
  OFF(ncclNetProperties_v9_t, speed, 36);
  OFF(ncclNetProperties_v9_t, netDeviceVersion, 60);
  OFF(ncclNetProperties_v9_t, vProps, 64);
  OFF(ncclNetProperties_v9_t, maxP2pBytes, 88);
  OFF(ncclNetProperties_v9_t, maxCollBytes, 96);
  CHECK_EQ_INT(sizeof(ncclNetProperties_v9_t), 104);
  CHECK_EQ_INT(sizeof(ncclNetProperties_v10_t), 104);
  OFF(ncclNetProperties_v10_t, maxCollBytes, 96);

  /* NCCL 2.28's v11: 4 devices per vNIC, maxMultiRequestSize last, 112 bytes. */
  CHECK_EQ_INT(sizeof(ncclNetVDeviceProps_v11_t), 20);
  OFF(ncclNetProperties_v11_t, vProps, 64);
  OFF(ncclNetProperties_v11_t, maxP2pBytes, 88);
  OFF(ncclNetProperties_v11_t, maxMultiRequestSize, 104);
  CHECK_EQ_INT(sizeof(ncclNetProperties_v11_t), 112);

  CHECK_EQ_INT(sizeof(ncclNetVDeviceProps_v12_t), 36);
  OFF(ncclNetProperties_v12_t, maxP2pBytes, 104);
  OFF(ncclNetProperties_v12_t, maxCollBytes, 112);
  OFF(ncclNetProperties_v12_t, maxMultiRequestSize, 120);
  OFF(ncclNetProperties_v12_t, railId, 124);
  OFF(ncclNetProperties_v12_t, planeId, 126);
  CHECK_EQ_INT(sizeof(ncclNetProperties_v12_t), 128);
}

static void check_tables(void) {
  /* name + function pointers, in NCCL's order. */
  OFF(ncclNet_v6_t, init, 8);
  OFF(ncclNet_v6_t, regMr, 56);
  OFF(ncclNet_v6_t, isend, 80);
  OFF(ncclNet_v6_t, closeListen, 128);
  CHECK_EQ_INT(sizeof(ncclNet_v6_t), 136);
  OFF(ncclNet_v7_t, irecvConsumed, 144);
  OFF(ncclNet_v8_t, irecvConsumed, 144);
  OFF(ncclNet_v9_t, makeVDevice, 152);
  OFF(ncclNet_v10_t, makeVDevice, 152);
  OFF(ncclNet_v11_t, finalize, 160);
  OFF(ncclNet_v11_t, setNetAttr, 168);
  CHECK_EQ_INT(sizeof(ncclNet_v12_t), 176);

  CHECK_EQ_INT(sizeof(ncclNetAttr_v11_t), 44);
  CHECK_EQ_INT(sizeof(ncclNetCommConfig_v11_t), 4);

  OFF(ncclNetDeviceHandle_v7_t, handle, 8);
  OFF(ncclNetDeviceHandle_v7_t, size, 16);
  OFF(ncclNetDeviceHandle_v7_t, needsProxyProgress, 24);
  CHECK_EQ_INT(sizeof(ncclNetDeviceHandle_v12_t), 32);
}

int main(void) {
  CHECK_EQ_INT(sizeof(void*), 8); /* the offsets below are LP64's */
  check_props_common();
  check_props_vnic();
  check_tables();
  ncclNetAttr_v12_t attr = NCCL_NET_ATTR_INIT;
  CHECK_EQ_INT(attr.sendCommAttr.maxConcurrentPeers, -1);
  CHECK_EQ_INT(attr.proto, (uint32_t)-1);
  CHECK_EQ_INT(NCCL_NET_DEVICE_UNPACK, 1);
  CHECK_EQ_INT(NCCL_NET_DEVICE_UNPACK_VERSION, 7);
  return 0;
}
