/* The proxy backend of NCCL 2.28's GIN as its inline device code writes it
 * (nccl_device/gin/proxy/): the context a kernel's ncclGin handle points
 * to, and the 64-byte descriptors (GFDs) it posts into one queue per
 * peer. Laid out as NVIDIA's 2.28.9 headers lay them out; the layout test
 * (tests/kernel-core/api/devapi_layout*) compares every offset and bit. */
#ifndef MKCCL_GIN_GIN_GFD_H
#define MKCCL_GIN_GIN_GFD_H

#include <stdint.h>

/* ncclNetDeviceType of the proxy backend (and of the device-direct one
 * mkccl refuses), as ncclDevComm.ginTypes holds them. */
#define GIN_TYPE_PROXY 2
#define GIN_TYPE_GDAKI 3
#define GIN_PROXY_VERSION 100

/* Op bits of a descriptor's header. */
#define GIN_OP_PUT 0x01u
#define GIN_OP_INLINE 0x02u
#define GIN_OP_COUNTER 0x04u
#define GIN_OP_SIGNAL_INC 0x08u
#define GIN_OP_SIGNAL_ADD 0x10u

#define GIN_GFD_QWORDS 8
#define GIN_GFD_BYTES 64

/* What the kernels' handle points to: one per context, in device memory. */
typedef struct gin_gpu_ctx {
  int nranks;
  uint32_t queueSize;    /* descriptors per peer, a power of two */
  void* queues;          /* [nRanks][queueSize] descriptors, host memory the GPU maps */
  uint32_t* pis;         /* [nRanks] producer indices: only the GPU touches them */
  uint32_t* cis;         /* [nRanks] consumer indices: the proxy writes, the GPU reads */
  uint64_t* counters;    /* [nCounters]: local completions, the proxy adds */
  uint64_t* signals;     /* [nSignals]: remote puts' signals, the proxy adds */
} gin_gpu_ctx_t;

/* One descriptor, decoded. */
typedef struct gin_gfd {
  uint32_t op;
  uint64_t size;
  uint64_t srcOff, srcWin; /* srcWin: the source window's GIN handle (0 with inline data) */
  uint64_t dstOff, dstWin;
  uint64_t inlineValue;    /* op & GIN_OP_INLINE: the value put, its low `size` bytes */
  uint32_t counterId, signalId;
  uint64_t signalValue;
} gin_gfd_t;

/* The descriptor at `slot` when the GPU finished writing all its qwords:
 * decoded into *out, the slot cleared for the GPU's next round, 1.
 * 0 while the header is not there yet; a half-written descriptor is
 * waited for (its qwords come within one store burst). */
int gin_gfd_take(volatile uint64_t* slot, gin_gfd_t* out);

/* What gin_gfd_take reads: the GPU's side, for tests that play the GPU. */
void gin_gfd_write(volatile uint64_t* slot, const gin_gfd_t* gfd);

#endif
