/* The GPU half of the transport services: pinned and device memory, IPC
 * handles, peer access, host registration, through the driver shim. Used
 * by GPU communicators; their context is current on the calling thread. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/param.h"
#include "comm/comm.h"
#include "cuda/gpu.h"
#include "transport/transport.h"

static ncclResult_t gpu_host_alloc(void* ctx, size_t bytes, void** ptr) {
  (void)ctx;
  const cuda_gpu_t* g = cuda_gpu();
  if (!g) return ncclSystemError;
  void* p = NULL;
  CU_CHECK(g->mem_host_alloc(&p, bytes ? bytes : 1, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
  memset(p, 0, bytes);
  *ptr = p;
  return ncclSuccess;
}

static ncclResult_t gpu_host_free(void* ctx, void* ptr) {
  (void)ctx;
  const cuda_gpu_t* g = cuda_gpu();
  if (g && ptr) g->mem_free_host(ptr);
  return ncclSuccess;
}

/* Zeroed device memory. The zeroing runs on a private non-blocking stream
 * and is waited for (NCCL's ncclCudaCalloc does the same): cuMemsetD8 would
 * run on the legacy stream, asynchronously, so a kernel on the user's
 * non-blocking stream could use a connection made at launch time (p2p)
 * before its head/tail words are zeroed, or have them zeroed under it; and a
 * legacy-stream operation waits for every blocking stream's kernels. */
/* The bytes of the allocation at d, as the driver has it (0 if it cannot say). */
static size_t gpu_alloc_bytes(const cuda_gpu_t* g, cu_deviceptr_t d) {
  cu_deviceptr_t base = 0;
  size_t size = 0;
  return g->mem_get_address_range && g->mem_get_address_range(&base, &size, d) == CUDA_DRV_SUCCESS ? size : 0;
}

static ncclResult_t gpu_device_alloc(void* ctx, size_t bytes, void** ptr) {
  struct ncclComm* comm = ctx;
  const cuda_gpu_t* g = cuda_gpu();
  if (!g) return ncclSystemError;
  cu_deviceptr_t d = 0;
  CU_CHECK(g->mem_alloc(&d, bytes ? bytes : 1));
  cu_stream_t s = NULL;
  cu_result_t r = g->stream_create(&s, CU_STREAM_NON_BLOCKING);
  if (r == CUDA_DRV_SUCCESS) {
    r = g->memset_d8_async(d, 0, bytes, s);
    if (r == CUDA_DRV_SUCCESS) r = g->stream_synchronize(s);
    g->stream_destroy(s);
  }
  if (r != CUDA_DRV_SUCCESS) {
    g->mem_free(d);
    return CU_FAIL("cuMemsetD8Async (zeroing a connection's device memory)", r);
  }
  __atomic_add_fetch(&comm->gpuMemBytes, gpu_alloc_bytes(g, d), __ATOMIC_RELAXED);
  *ptr = (void*)(uintptr_t)d;
  return ncclSuccess;
}

static ncclResult_t gpu_device_free(void* ctx, void* ptr) {
  struct ncclComm* comm = ctx;
  const cuda_gpu_t* g = cuda_gpu();
  if (!g || !ptr) return ncclSuccess;
  __atomic_sub_fetch(&comm->gpuMemBytes, gpu_alloc_bytes(g, (cu_deviceptr_t)(uintptr_t)ptr), __ATOMIC_RELAXED);
  g->mem_free((cu_deviceptr_t)(uintptr_t)ptr);
  return ncclSuccess;
}

static ncclResult_t gpu_ipc_handle(void* ctx, void* devPtr, void* handle) {
  (void)ctx;
  const cuda_gpu_t* g = cuda_gpu();
  if (!g) return ncclSystemError;
  cu_ipc_handle_t h;
  CU_CHECK(g->ipc_get_mem_handle(&h, (cu_deviceptr_t)(uintptr_t)devPtr));
  memcpy(handle, &h, sizeof(h));
  return ncclSuccess;
}

static ncclResult_t gpu_ipc_open(void* ctx, const void* handle, void** devPtr) {
  (void)ctx;
  const cuda_gpu_t* g = cuda_gpu();
  if (!g) return ncclSystemError;
  cu_ipc_handle_t h;
  memcpy(&h, handle, sizeof(h));
  cu_deviceptr_t d = 0;
  CU_CHECK(g->ipc_open_mem_handle(&d, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  *devPtr = (void*)(uintptr_t)d;
  return ncclSuccess;
}

static ncclResult_t gpu_ipc_close(void* ctx, void* devPtr) {
  (void)ctx;
  const cuda_gpu_t* g = cuda_gpu();
  if (g && devPtr) g->ipc_close_mem_handle((cu_deviceptr_t)(uintptr_t)devPtr);
  return ncclSuccess;
}

/* The peer's device as this process numbers it (by PCI bus id). */
static ncclResult_t gpu_peer_device(const mkcclPeer_v1* peer, cu_device_t* dev) {
  const cuda_gpu_t* g = cuda_gpu();
  if (!g) return ncclSystemError;
  int64_t b = peer->busId;
  char busId[32];
  snprintf(busId, sizeof(busId), "%04x:%02x:%02x.%x", (unsigned)((b >> 20) & 0xffff), (unsigned)((b >> 12) & 0xff),
           (unsigned)((b >> 4) & 0xff), (unsigned)(b & 0xf));
  CU_CHECK(g->device_get_by_pci_bus_id(dev, busId));
  return ncclSuccess;
}

static ncclResult_t gpu_peer_access(void* ctx, const mkcclPeer_v1* peer, int* canAccess) {
  struct ncclComm* comm = ctx;
  const cuda_gpu_t* g = cuda_gpu();
  const cuda_driver_t* d = cuda_driver();
  *canAccess = 0;
  if (!g || peer->cudaDev < 0 || peer->busId < 0) return ncclSuccess;
  cu_device_t peerDev;
  if (gpu_peer_device(peer, &peerDev) != ncclSuccess) return ncclSuccess; /* not visible here */
  if (peerDev == comm->cudaDev) {
    *canAccess = 1;
    return ncclSuccess;
  }
  int ok = 0;
  CU_CHECK(d->device_can_access_peer(&ok, comm->cudaDev, peerDev));
  if (ok && peer->pidHash == comm->dp.tr.peers[comm->rank].pidHash) {
    /* Same process: direct pointers, which need peer access enabled. The
     * peer's primary context stays retained until this comm ends: released
     * now, it could drop to no holder (the peer's rank may not have bound
     * it yet) and be destroyed, taking the peer mapping with it, and the
     * context the peer's rank then creates would not be mapped here. */
    int held = peerDev >= 0 && peerDev < 64 && (comm->dp.exec.gpuPeerCtxHeld >> peerDev & 1);
    cu_context_t peerCtx;
    CU_CHECK(g->primary_ctx_retain(&peerCtx, peerDev));
    cu_result_t r = g->ctx_enable_peer_access(peerCtx, 0);
    if (held || peerDev < 0 || peerDev >= 64) g->primary_ctx_release(peerDev);
    else comm->dp.exec.gpuPeerCtxHeld |= 1ull << peerDev;
    if (r != CUDA_DRV_SUCCESS && r != CUDA_DRV_ERROR_PEER_ACCESS_ALREADY_ENABLED)
      return CU_FAIL("cuCtxEnablePeerAccess", r);
  }
  *canAccess = ok;
  return ncclSuccess;
}

static ncclResult_t gpu_host_register(void* ctx, void* ptr, size_t bytes, void** devPtr) {
  (void)ctx;
  const cuda_gpu_t* g = cuda_gpu();
  if (!g) return ncclSystemError;
  cu_result_t r = g->mem_host_register(ptr, bytes, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
  if (r != CUDA_DRV_SUCCESS && r != CUDA_DRV_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
    return CU_FAIL("cuMemHostRegister", r);
  cu_deviceptr_t d = 0;
  CU_CHECK(g->mem_host_get_device_pointer(&d, ptr, 0));
  *devPtr = (void*)(uintptr_t)d;
  return ncclSuccess;
}

static ncclResult_t gpu_host_unregister(void* ctx, void* ptr) {
  (void)ctx;
  const cuda_gpu_t* g = cuda_gpu();
  if (g && ptr) g->mem_host_unregister(ptr);
  return ncclSuccess;
}

/* The services the proxy thread calls work in the communicator's context. */
static cu_result_t gpu_ctx_current(const cuda_gpu_t* g, const struct ncclComm* comm) {
  return comm->dp.exec.gpuCtx ? g->ctx_set_current((cu_context_t)comm->dp.exec.gpuCtx) : CUDA_DRV_SUCCESS;
}

/* On a private non-blocking stream, so it waits for no kernel of the
 * user's: the proxy's fallback copy of a user buffer. */
static ncclResult_t gpu_device_copy(void* ctx, void* dst, const void* src, size_t bytes) {
  struct ncclComm* comm = ctx;
  const cuda_gpu_t* g = cuda_gpu();
  if (!g) return ncclSystemError;
  CU_CHECK(gpu_ctx_current(g, comm));
  cu_stream_t s = NULL;
  CU_CHECK(g->stream_create(&s, CU_STREAM_NON_BLOCKING));
  cu_result_t r = g->memcpy_async((cu_deviceptr_t)(uintptr_t)dst, (cu_deviceptr_t)(uintptr_t)src, bytes, s);
  if (r == CUDA_DRV_SUCCESS) r = g->stream_synchronize(s);
  g->stream_destroy(s);
  if (r != CUDA_DRV_SUCCESS) return CU_FAIL("cuMemcpyAsync (a proxy's copy of a user buffer)", r);
  return ncclSuccess;
}

#define CUDA_DRV_ATTR_DMA_BUF_SUPPORTED 124
#define CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD 1
typedef cu_result_t (*cu_range_handle_fn)(void* handle, cu_deviceptr_t ptr, size_t size, int type,
                                          unsigned long long flags);

/* Not an error: the caller registers without dma-buf. Said once. */
static ncclResult_t gpu_dma_buf_none(const char* why, int dev) {
  static int said;
  if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
    MK_INFO(NCCL_INIT | NCCL_NET, "GPU %d: no dma-buf registration: %s", dev, why);
  return ncclInvalidUsage;
}

/* The whole pages around the range: a dma-buf covers pages. */
static ncclResult_t gpu_dma_buf_fd(void* ctx, const void* ptr, size_t bytes, int* fd, uint64_t* offset) {
  struct ncclComm* comm = ctx;
  const cuda_driver_t* d = cuda_driver();
  if (!param_NCCL_DMABUF_ENABLE()) return gpu_dma_buf_none("NCCL_DMABUF_ENABLE=0", comm->cudaDev);
  int supported = 0;
  if (!d || d->device_get_attribute(&supported, CUDA_DRV_ATTR_DMA_BUF_SUPPORTED, comm->cudaDev) != CUDA_DRV_SUCCESS ||
      !supported)
    return gpu_dma_buf_none("the GPU does not export dma-buf (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED)", comm->cudaDev);
  cu_range_handle_fn get = (cu_range_handle_fn)cuda_driver_symbol("cuMemGetHandleForAddressRange");
  if (!get) return gpu_dma_buf_none("the CUDA driver has no cuMemGetHandleForAddressRange", comm->cudaDev);
  /* The proxy thread registers user buffers: the communicator's context on it. */
  const cuda_gpu_t* g = cuda_gpu();
  if (!g || gpu_ctx_current(g, comm) != CUDA_DRV_SUCCESS) return gpu_dma_buf_none("cuCtxSetCurrent failed", comm->cudaDev);
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t lo = (uintptr_t)ptr & ~(page - 1), hi = ((uintptr_t)ptr + bytes + page - 1) & ~(page - 1);
  int out = -1;
  cu_result_t r = get(&out, (cu_deviceptr_t)lo, hi - lo, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  if (r != CUDA_DRV_SUCCESS || out < 0) {
    char why[160];
    snprintf(why, sizeof(why), "cuMemGetHandleForAddressRange of %zu bytes: %s", (size_t)(hi - lo), cuda_result_str(r));
    return gpu_dma_buf_none(why, comm->cudaDev);
  }
  *fd = out;
  *offset = (uint64_t)((uintptr_t)ptr - lo);
  return ncclSuccess;
}

void transport_services_gpu_release(struct ncclComm* comm) {
  const cuda_gpu_t* g = cuda_gpu();
  for (int d = 0; g && d < 64; d++)
    if (comm->dp.exec.gpuPeerCtxHeld >> d & 1) g->primary_ctx_release(d);
  comm->dp.exec.gpuPeerCtxHeld = 0;
}

ncclResult_t transport_services_gpu_fill(struct ncclComm* comm, mkcclTransportServices_v1* s) {
  if (!cuda_gpu()) return ncclSystemError;
  s->hostAlloc = gpu_host_alloc;
  s->hostFree = gpu_host_free;
  s->deviceAlloc = gpu_device_alloc;
  s->deviceFree = gpu_device_free;
  s->cudaDev = comm->cudaDev;
  s->ipcHandle = gpu_ipc_handle;
  s->ipcOpen = gpu_ipc_open;
  s->ipcClose = gpu_ipc_close;
  s->peerAccess = gpu_peer_access;
  s->hostRegister = gpu_host_register;
  s->hostUnregister = gpu_host_unregister;
  s->deviceCopy = gpu_device_copy;
  s->dmaBufFd = gpu_dma_buf_fd;
  return cuda_device_sm(comm->cudaDev, &s->sm);
}
