/* mkccl net-device ABI, version 1 (ours: NCCL compiles its device types in).
 *
 * A net plugin may say (getProperties: netDeviceType, netDeviceVersion) that
 * the data of its receives lands somewhere the executor must fetch it from
 * (UNPACK: pages scattered in a bounce buffer). The code that knows
 * how is a net-device plugin: one per type, HOST (0) and UNPACK (1). The core
 * never names one: it loads every `net-device` plugin of the manifests, keeps
 * one per type, and checks the version exactly as NCCL checks
 * netDeviceVersion (UNPACK: NCCL_NET_DEVICE_UNPACK_VERSION, 0x7, nothing
 * else); a refused type falls back to HOST.
 *
 * Host-side hooks: handleAlloc (the generic handle the core hands the net
 * plugin's accept/connect to fill; NULL for sides that need none),
 * needsProxyProgress (the proxy keeps calling test/irecvConsumed), handleFree.
 * hostUnpack: the executor's receive on host buffers (the CPU twin of the
 * device code). deviceCode: the plugin's device functions as LTO-IR, linked
 * with the core's kernels at run time (docs/UNPACK.md).
 *
 * Frozen: fields are only appended; `size` says how many are present.
 * Exported symbol: mkcclNetDevicePlugin_v1. */
#ifndef MKCCL_ABI_NET_DEVICE_V1_H
#define MKCCL_ABI_NET_DEVICE_V1_H

#include <stddef.h>
#include <stdint.h>

#include "mkccl_plugin_v1.h"
#include "net/nccl_net.h"

#define MKCCL_NET_DEVICE_SYMBOL_V1 "mkcclNetDevicePlugin_v1"
#define MKCCL_NET_DEVICE_ABI_V1 1

/* The plugin's device side: a fatbin with relocatable code for `arch`
 * (nvcc -rdc, code=sm_XX: linked with the core's collective kernels) and
 * LTO-IR (code=lto_XX: the call-site kernel), or NULL when the plugin was
 * built without nvcc. The entry points are extern "C" __device__ functions
 * of the ABI below. */
typedef struct {
  const void* ltoir;    /* the fatbin (named for its first content, LTO-IR) */
  size_t ltoirSize;
  const char* arch;     /* what it was built for: "sm_90" */
} mkcclNetDeviceCode_v1;

/* Device entry points an UNPACK plugin's LTO-IR defines (extern "C"):
 *   __device__ uint64_t mkcclNetDevUnpackHead_v1(const void* handle);
 *       the queue head at kernel start (handle: the type's own handle);
 *   __device__ void mkcclNetDevUnpack_v1(const void* handle, uint64_t head, char* dst, int nbytes,
 *                                        void* warpScratch, int tid, int nthreads);
 *       one receive, by all nthreads threads (whole warps), warpScratch:
 *       MKCCL_NET_DEVICE_WARP_SCRATCH bytes of shared memory per warp;
 *   __device__ void mkcclNetDevUnpackSaveHead_v1(void* handle, uint64_t head);
 *       the head written back at kernel end. */
#define MKCCL_NET_DEVICE_WARP_SCRATCH 64
/* The core's kernels run 512 threads per block, so the functions they call
 * may use at most this many registers per thread (build them with nvcc
 * -maxrregcount=128); more and the link at communicator init fails, and
 * the communicator refuses UNPACK. */
#define MKCCL_NET_DEVICE_MAX_REGS 128
#define MKCCL_NET_DEVICE_FN_HEAD "mkcclNetDevUnpackHead_v1"
#define MKCCL_NET_DEVICE_FN_UNPACK "mkcclNetDevUnpack_v1"
#define MKCCL_NET_DEVICE_FN_SAVE_HEAD "mkcclNetDevUnpackSaveHead_v1"

typedef struct {
  size_t size;       /* sizeof(mkcclNetDevice_v1) of the plugin's build */
  int abiVersion;    /* MKCCL_NET_DEVICE_ABI_V1 */
  const char* name;  /* plugin name = folder name: "unpack-device" */
  ncclNetDeviceType type;
  int version;       /* netDeviceVersion: UNPACK 0x7 */
  /* The generic handle for one side of a connection, to be filled by the
   * net plugin's accept (recv) or connect (send); *handle = NULL when that
   * side needs none. Freed with handleFree after the net comm is closed. */
  ncclResult_t (*handleAlloc)(int isRecv, ncclNetDeviceHandle_v12_t** handle);
  /* Whether the proxy must keep progressing this connection for the plugin
   * (test until done, irecvConsumed once the executor consumed). */
  int (*needsProxyProgress)(const ncclNetDeviceHandle_v12_t* handle);
  ncclResult_t (*handleFree)(ncclNetDeviceHandle_v12_t* handle);
  /* The host executor's receive: move the receive at the handle's queue head
   * into dst (at most maxBytes), advance the head; *bytes = bytes written.
   * NULL for HOST (nothing to do: data is already in place). */
  ncclResult_t (*hostUnpack)(ncclNetDeviceHandle_v12_t* handle, void* dst, size_t maxBytes, size_t* bytes);
  /* The device side; NULL (or a NULL blob): none, GPU executors refuse
   * the type. A function, so the blob may be found at run time. */
  const mkcclNetDeviceCode_v1* (*deviceCode)(void);
} mkcclNetDevice_v1;

#endif
