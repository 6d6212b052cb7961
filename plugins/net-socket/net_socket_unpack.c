/* Unpack mode of net-socket (net_socket_unpack.h). */
#include "net_socket_unpack.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "net_socket_comm.h"
#include "net_socket_cuda.h"
#include "net_socket_log.h"
#include "net_socket_params.h"

/* Pages sit NET_SOCKET_UNPACK_STRIDE apart in a slot of the bounce buffer,
 * leaving room for the 0..15-byte skew. */
#define NET_SOCKET_UNPACK_STRIDE (MKCCL_UNPACK_PAGE_SIZE + 16)
#define NET_SOCKET_UNPACK_PAGES (MKCCL_UNPACK_MAX_SLICE_SIZE / MKCCL_UNPACK_PAGE_SIZE)

int net_socket_unpack_mode(void) { return net_socket_param_MKCCL_SOCKET_UNPACK() != 0; }

/* Large and mostly untouched: reserved, pages come as they are written. */
static void* net_socket_unpack_map(size_t bytes) {
  void* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

void net_socket_unpack_free(net_socket_unpack_t* u) {
  if (!u) return;
  if (u->cudaRegistered) {
    net_socket_cuda_unregister(u->handle.bounce_buf);
    net_socket_cuda_unregister(u->handle.meta);
    net_socket_cuda_unregister(u);
  }
  if (u->landing) munmap(u->landing, u->landingBytes);
  if (u->handle.bounce_buf) munmap(u->handle.bounce_buf, u->bounceBytes);
  if (u->handle.meta) munmap(u->handle.meta, sizeof(mkcclUnpackMeta_v7));
  munmap(u, sizeof(*u));
}

/* A GPU consumer reads the handle, metadata and pages from its kernels:
 * all three device-visible, or none registered (net_socket_cuda.h). */
static ncclResult_t net_socket_unpack_device_map(net_socket_unpack_t* u) {
  int a = net_socket_cuda_register(u, sizeof(*u));
  if (a <= 0) return a == 0 ? ncclSuccess : NS_FAIL(ncclSystemError, "accept: cannot register the UNPACK handle");
  int b = net_socket_cuda_register(u->handle.meta, sizeof(mkcclUnpackMeta_v7));
  int c = b == 1 ? net_socket_cuda_register(u->handle.bounce_buf, u->bounceBytes) : -1;
  if (c != 1) {
    if (b == 1) net_socket_cuda_unregister(u->handle.meta);
    net_socket_cuda_unregister(u);
    return NS_FAIL(ncclSystemError, "accept: cannot register the UNPACK metadata and bounce buffer with CUDA");
  }
  u->cudaRegistered = 1;
  return ncclSuccess;
}

ncclResult_t net_socket_unpack_attach(net_socket_comm_t* comm, ncclNetDeviceHandle_v7_t* dev) {
  if (!dev || dev->netDeviceType != NCCL_NET_DEVICE_UNPACK || !net_socket_unpack_mode()) return ncclSuccess;
  if (dev->netDeviceVersion != MKCCL_UNPACK_VERSION)
    return NS_FAIL(ncclInvalidUsage, "accept: UNPACK version 0x%x asked for, this plugin produces 0x%x",
                   dev->netDeviceVersion, MKCCL_UNPACK_VERSION);
  /* Pages of its own (zeroed): the handle in it may be registered with CUDA. */
  net_socket_unpack_t* u = net_socket_unpack_map(sizeof(*u));
  if (!u) return NS_FAIL(ncclSystemError, "accept: out of memory for the UNPACK queue");
  u->slotBytes = (size_t)NET_SOCKET_UNPACK_PAGES * NET_SOCKET_UNPACK_STRIDE;
  u->bounceBytes = u->slotBytes * MKCCL_UNPACK_QUEUE_DEPTH;
  u->landingBytes = (size_t)MKCCL_UNPACK_MAX_SLICE_SIZE * MKCCL_UNPACK_QUEUE_DEPTH;
  u->handle.meta = net_socket_unpack_map(sizeof(mkcclUnpackMeta_v7));
  u->handle.bounce_buf = net_socket_unpack_map(u->bounceBytes);
  u->landing = net_socket_unpack_map(u->landingBytes);
  if (!u->handle.meta || !u->handle.bounce_buf || !u->landing) {
    net_socket_unpack_free(u);
    return NS_FAIL(ncclSystemError, "accept: cannot map the UNPACK bounce buffer");
  }
  ncclResult_t res = net_socket_unpack_device_map(u);
  if (res != ncclSuccess) {
    net_socket_unpack_free(u);
    return res;
  }
  comm->unpack = u;
  dev->handle = &u->handle;
  dev->size = sizeof(u->handle);
  dev->needsProxyProgress = 1; /* slots come back through irecvConsumed */
  return ncclSuccess;
}

ncclResult_t net_socket_unpack_post(net_socket_comm_t* comm, int n, const size_t* sizes, net_socket_request_t* r,
                                    char** landing) {
  net_socket_unpack_t* u = comm->unpack;
  *landing = NULL;
  if (n != 1) return NS_FAIL(ncclInvalidUsage, "irecv: UNPACK receives take one buffer, %d given", n);
  if (sizes[0] > MKCCL_UNPACK_MAX_SLICE_SIZE)
    return NS_FAIL(ncclInvalidUsage, "irecv: UNPACK receives are at most %d bytes, %zu posted",
                   MKCCL_UNPACK_MAX_SLICE_SIZE, sizes[0]);
  int slot = (int)(u->tail % MKCCL_UNPACK_QUEUE_DEPTH);
  if (u->busy[slot]) return ncclSuccess;
  u->busy[slot] = 1;
  r->unpackSlot = slot;
  r->unpackSeq = u->tail++;
  *landing = u->landing + (size_t)slot * MKCCL_UNPACK_MAX_SLICE_SIZE;
  return ncclSuccess;
}

void net_socket_unpack_publish(net_socket_comm_t* comm, net_socket_request_t* r) {
  net_socket_unpack_t* u = comm->unpack;
  int slot = r->unpackSlot;
  size_t bytes = r->subs[0].received;
  uint64_t pages = (bytes + MKCCL_UNPACK_PAGE_SIZE - 1) / MKCCL_UNPACK_PAGE_SIZE;
  unsigned skew = (unsigned)(r->unpackSeq % 16);
  const char* land = u->landing + (size_t)slot * MKCCL_UNPACK_MAX_SLICE_SIZE;
  char* base = (char*)u->handle.bounce_buf + (size_t)slot * u->slotBytes;
  mkcclUnpackLoadMeta_v7* meta = u->handle.meta->mem[slot];
  for (uint64_t i = 0; i < pages; i++) {
    /* Reversed, then rotated by the receive number: a permutation. */
    uint64_t at = (pages - 1 - i + r->unpackSeq) % pages;
    size_t off = (size_t)i * MKCCL_UNPACK_PAGE_SIZE;
    uint32_t len = (uint32_t)(bytes - off < MKCCL_UNPACK_PAGE_SIZE ? bytes - off : MKCCL_UNPACK_PAGE_SIZE);
    size_t src = (size_t)slot * u->slotBytes + (size_t)at * NET_SOCKET_UNPACK_STRIDE + skew;
    memcpy(base + (size_t)at * NET_SOCKET_UNPACK_STRIDE + skew, land + off, len);
    meta[i].src_off = (uint32_t)src;
    meta[i].len = len;
    meta[i].dst_off = off;
  }
  __atomic_store_n(&u->handle.meta->cnt[slot], pages, __ATOMIC_RELEASE);
  r->awaitConsumed = 1;
}

ncclResult_t net_socket_irecv_consumed(void* recvComm, int n, void* request) {
  net_socket_comm_t* comm = recvComm;
  net_socket_request_t* r = request;
  (void)n;
  /* NCCL 2.28 calls irecvConsumed after every receive when a plugin has it.
   * On a HOST comm test() already gave the request back (it may even carry
   * a newer receive now): nothing to release, and it must not be touched. */
  if (comm && !comm->unpack) return ncclSuccess;
  if (!comm || !r || r->comm != comm || !r->used || !r->awaitConsumed)
    return NS_FAIL(ncclInvalidArgument, "irecvConsumed: not a completed UNPACK receive of this comm");
  net_socket_unpack_t* u = comm->unpack;
  __atomic_store_n(&u->handle.meta->cnt[r->unpackSlot], 0, __ATOMIC_RELAXED);
  u->busy[r->unpackSlot] = 0;
  r->awaitConsumed = 0;
  r->used = 0;
  return ncclSuccess;
}
