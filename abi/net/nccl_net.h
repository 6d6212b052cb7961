/* NCCL's net plugin ABI, versions 6 to 12: the constants and types every
 * version shares, then one frozen header per version (nccl_net_vN.h).
 *
 * Layouts are NCCL's, byte for byte: a vendor's plugin built against NCCL's
 * headers loads into mkccl, and a plugin of ours loads into NCCL. A plugin
 * exports `ncclNetPlugin_vN` (a ncclNet_vN_t) and optionally
 * `ncclCollNetPlugin_vN` (a ncclCollNet_vN_t: collnet/nccl_collnet.h).
 *
 * Which version to export: NCCL 2.28 loads v6..v11 (not v12), so a plugin
 * meant to load into both NCCL 2.28 and mkccl exports ncclNetPlugin_v11.
 * mkccl loads v6..v12 and works internally with v12 (kernel-core/plugin).
 *
 * There is deliberately no unversioned ncclNet_t here: say which version. */
#ifndef MKCCL_ABI_NET_NCCL_NET_H
#define MKCCL_ABI_NET_NCCL_NET_H

#include <stddef.h>
#include <stdint.h>

#include "nccl.h"
#include "nccl_common.h"

/* Opaque connection handle exchanged between ranks (listen -> connect). */
#define NCCL_NET_HANDLE_MAXSIZE 128

/* Largest maxP2pBytes / maxCollBytes a plugin may report (v9+). */
#define NCCL_MAX_NET_SIZE_BYTES (1LL * 1024 * 1024 * 1024 * 1024)
/* What NCCL assumes for plugins too old to report maxP2pBytes/maxCollBytes
 * (v6..v8): a power of two under INT_MAX, since their sizes are `int`. */
#define MAX_NET_SIZE (1024LL * 1024 * 1024)
#define MAX_COLLNET_SIZE (512LL * 1024 * 1024)

/* irecv tags: a receive may complete without the data being tested. */
#define NCCL_NET_OPTIONAL_RECV_COMPLETION 0x1
#define NCCL_NET_MULTI_REQUEST 0x2

/* ptrSupport bits, and the `type` of regMr. */
#define NCCL_PTR_HOST 0x1
#define NCCL_PTR_CUDA 0x2
#define NCCL_PTR_DMABUF 0x4

#define NCCL_NET_MR_FLAG_FORCE_SO (1 << 0)
#define NCCL_NET_SIGNAL_OP_INC 0x1
#define NCCL_NET_SIGNAL_OP_ADD 0x2

/* Outstanding requests per comm the caller may have: 8 for v6 plugins,
 * 32 from v7 on. */
#define NCCL_NET_MAX_REQUESTS_V6 8
#define NCCL_NET_MAX_REQUESTS 32

/* Physical devices one virtual NIC may merge (vProps.devs), per version. */
#define NCCL_NET_MAX_DEVS_PER_NIC_V9 4
#define NCCL_NET_MAX_DEVS_PER_NIC_V10 4
#define NCCL_NET_MAX_DEVS_PER_NIC_V11 4
#define NCCL_NET_MAX_DEVS_PER_NIC_V12 8
#define NCCL_NET_MAX_DEVS_PER_NIC NCCL_NET_MAX_DEVS_PER_NIC_V12

/* ncclNetCommConfig.trafficClass, ncclNetAttr fields, railId/planeId:
 * "not set". */
#define NCCL_NET_TRAFFIC_CLASS_UNDEF -1
#define NCCL_NET_ATTR_UNDEF -1
#define NCCL_NET_ID_UNDEF -1

/* Device offload (net device plugins): the type a NIC reports in its
 * properties and the version the core was built for. A build of NCCL or
 * mkccl accepts exactly one UNPACK version. */
#define NCCL_NET_DEVICE_INVALID_VERSION 0x0
#define NCCL_NET_MTU_SIZE 4096
#define NCCL_NET_DEVICE_UNPACK_VERSION 0x7

typedef enum { NCCL_NET_DEVICE_HOST = 0, NCCL_NET_DEVICE_UNPACK = 1 } ncclNetDeviceType;

/* Handed back by connect/accept when the core asked for device offload. */
typedef struct {
  ncclNetDeviceType netDeviceType; /* offload type */
  int netDeviceVersion;            /* offload version */
  void* handle;                    /* plugin's device-side object */
  size_t size;                     /* bytes at handle */
  int needsProxyProgress;          /* the proxy must keep calling test() */
} ncclNetDeviceHandle_v7_t;

typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v8_t;
typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v9_t;
typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v10_t;
typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v11_t;
typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v12_t;

/* Symbol names, newest first. */
#define NCCL_NET_PLUGIN_SYMBOL_V12 "ncclNetPlugin_v12"
#define NCCL_NET_PLUGIN_SYMBOL_V11 "ncclNetPlugin_v11"
#define NCCL_NET_PLUGIN_SYMBOL_V10 "ncclNetPlugin_v10"
#define NCCL_NET_PLUGIN_SYMBOL_V9 "ncclNetPlugin_v9"
#define NCCL_NET_PLUGIN_SYMBOL_V8 "ncclNetPlugin_v8"
#define NCCL_NET_PLUGIN_SYMBOL_V7 "ncclNetPlugin_v7"
#define NCCL_NET_PLUGIN_SYMBOL_V6 "ncclNetPlugin_v6"

#include "net/nccl_net_v6.h"
#include "net/nccl_net_v7.h"
#include "net/nccl_net_v8.h"
#include "net/nccl_net_v9.h"
#include "net/nccl_net_v10.h"
#include "net/nccl_net_v11.h"
#include "net/nccl_net_v12.h"

#define NCCL_NET_ATTR_INIT NCCL_NET_ATTR_INIT_V12

#endif
