/* The net-device ABI v1 and the UNPACK 0x7 layout, field by field: net
 * plugins (producers) and net-device plugins (consumers) are built apart
 * and meet only through these layouts, and the GPU reads them too, so a
 * moved field is a broken pair. x86-64 / aarch64 LP64. */
#include <stddef.h>

#include "check.h"
#include "net-device/mkccl_net_device_v1.h"
#include "net-device/mkccl_unpack_v7.h"

#define OFF(type, field, expect) CHECK_EQ_INT(offsetof(type, field), expect)

int main(void) {
  /* UNPACK 0x7 (abi/net-device/mkccl_unpack_v7.h). */
  CHECK_EQ_INT(MKCCL_UNPACK_VERSION, NCCL_NET_DEVICE_UNPACK_VERSION);
  CHECK_EQ_INT(MKCCL_UNPACK_QUEUE_DEPTH, 16);
  CHECK_EQ_INT(MKCCL_UNPACK_PAGE_SIZE, 4096);
  CHECK_EQ_INT(MKCCL_UNPACK_MAX_SLICE_SIZE, 4194304);
  CHECK_EQ_INT(MKCCL_UNPACK_MAX_SLICE_PAGES, 2048);
  OFF(mkcclUnpackLoadMeta_v7, src_off, 0);
  OFF(mkcclUnpackLoadMeta_v7, len, 4);
  OFF(mkcclUnpackLoadMeta_v7, dst_off, 8);
  OFF(mkcclUnpackLoadMeta_v7, r64, 0);
  CHECK_EQ_INT(sizeof(mkcclUnpackLoadMeta_v7), 16);
  CHECK_EQ_INT(_Alignof(mkcclUnpackLoadMeta_v7), 16);
  OFF(mkcclUnpackMeta_v7, mem, 0);
  OFF(mkcclUnpackMeta_v7, cnt, 16 * 2048 * 16);
  CHECK_EQ_INT(sizeof(mkcclUnpackMeta_v7), 16 * 2048 * 16 + 16 * 8);
  OFF(mkcclUnpackHandle_v7, meta, 0);
  OFF(mkcclUnpackHandle_v7, bounce_buf, 8);
  OFF(mkcclUnpackHandle_v7, head, 16);
  CHECK_EQ_INT(sizeof(mkcclUnpackHandle_v7), 24);

  /* mkcclNetDevicePlugin_v1: frozen, fields only appended. */
  OFF(mkcclNetDevice_v1, size, 0);
  OFF(mkcclNetDevice_v1, abiVersion, 8);
  OFF(mkcclNetDevice_v1, name, 16);
  OFF(mkcclNetDevice_v1, type, 24);
  OFF(mkcclNetDevice_v1, version, 28);
  OFF(mkcclNetDevice_v1, handleAlloc, 32);
  OFF(mkcclNetDevice_v1, needsProxyProgress, 40);
  OFF(mkcclNetDevice_v1, handleFree, 48);
  OFF(mkcclNetDevice_v1, hostUnpack, 56);
  OFF(mkcclNetDevice_v1, deviceCode, 64);
  CHECK_EQ_INT(sizeof(mkcclNetDevice_v1), 72);
  OFF(mkcclNetDeviceCode_v1, ltoir, 0);
  OFF(mkcclNetDeviceCode_v1, ltoirSize, 8);
  OFF(mkcclNetDeviceCode_v1, arch, 16);
  CHECK_EQ_INT(MKCCL_NET_DEVICE_WARP_SCRATCH, 4 * sizeof(mkcclUnpackLoadMeta_v7));
  return 0;
}
