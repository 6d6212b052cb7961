/* What a GPU kernel sees of a communicator: per channel its ring, its
 * AllReduce tree and the connections it uses, in device memory. Filled by the host (plan/launch),
 * read by device/cuda/kernels.cu. Plain C so both sides share it. */
#ifndef MKCCL_CUDA_DEV_COMM_H
#define MKCCL_CUDA_DEV_COMM_H

#include <stdint.h>

#include "transport/mkccl_transport_v1.h"

#define MK_DEV_MAX_CHANNELS 32
#define MK_DEV_MAX_RANKS 64

typedef struct {
  char* buff;                 /* Simple protocol step buffers */
  int32_t stepSize;
  uint32_t flags;             /* MKCCL_CONN_* */
  volatile uint64_t* tail;
  volatile uint64_t* head;
  mkcclConnFifo_v1* connFifo;
  uint64_t step;              /* the GPU executor's step counter, kept across kernels */
  void* netDevHandle;         /* receives land elsewhere (net device UNPACK): the plugin's handle, else NULL */
} mk_dev_conn_t;

#define MK_DEV_TREE_DOWN 2 /* children of a binary tree node (device/common/sched_tree.h) */

typedef struct {
  int32_t ringPrev, ringNext, ringIndex;
  int32_t treeUp;                        /* AllReduce tree parent, -1 at the root */
  int32_t treeDown[MK_DEV_TREE_DOWN];    /* its children, -1 where absent */
  int32_t pad[2];
  int32_t ringRanks[MK_DEV_MAX_RANKS];
  /* One device copy per connection, however many algorithms use it (the
   * step counter is the connection's): [MK_DEV_CONN_KINDS][nRanks], as many
   * peers as the communicator has (MK_DEV_CONN). */
  mk_dev_conn_t conns[];
} mk_dev_channel_t;

/* Connection 0 (ring, tree) and 1 (p2p), each way, per peer. */
enum { MK_DEV_COLL_SEND = 0, MK_DEV_COLL_RECV, MK_DEV_P2P_SEND, MK_DEV_P2P_RECV, MK_DEV_CONN_KINDS };
#define MK_DEV_CONN(ch, kind, nRanks, peer) (&(ch)->conns[(kind) * (nRanks) + (peer)])

/* Per channel, what the kernel is doing (host memory mapped for the
 * device), for the watchdog to report a GPU that makes no progress. */
#define MK_DEV_STATUS_WORDS 8
enum { MK_STATUS_OP, MK_STATUS_PRIM, MK_STATUS_WORD, MK_STATUS_TARGET, MK_STATUS_RSTEP, MK_STATUS_SSTEP, MK_STATUS_TICKS,
       MK_STATUS_TIMEDOUT /* a wait on a peer saw no progress for MKCCL_TIMEOUT */ };

typedef struct {
  int32_t rank, nRanks;
  volatile uint32_t* abortFlag; /* host memory mapped for the device */
  volatile uint64_t* status;    /* [MK_DEV_MAX_CHANNELS][MK_DEV_STATUS_WORDS], mapped host memory */
  uint64_t timeoutNs;           /* MKCCL_TIMEOUT: a wait with no progress this long aborts (0: never) */
  uint64_t channelBytes;        /* one channel with its connections (mk_dev_channel_bytes) */
  /* then MK_DEV_MAX_CHANNELS channels of channelBytes each (mk_dev_channel) */
} mk_dev_comm_t;

#if defined(__CUDACC__)
#define MK_DEV_FN __host__ __device__ __forceinline__
#else
#define MK_DEV_FN static inline
#endif
/* Sized to the communicator: 2 ranks need 23 KB for all channels, where a
 * fixed MK_DEV_MAX_RANKS layout took 468 KB whatever the size. */
MK_DEV_FN uint64_t mk_dev_channel_bytes(int nRanks) {
  return sizeof(mk_dev_channel_t) + (uint64_t)MK_DEV_CONN_KINDS * (uint64_t)nRanks * sizeof(mk_dev_conn_t);
}
MK_DEV_FN uint64_t mk_dev_comm_bytes(int nRanks) {
  return sizeof(mk_dev_comm_t) + (uint64_t)MK_DEV_MAX_CHANNELS * mk_dev_channel_bytes(nRanks);
}
/* Channel c of a comm laid out as above, channelBytes apart: an address
 * computation only, so the host may use it on the device copy's address. */
MK_DEV_FN mk_dev_channel_t* mk_dev_channel(mk_dev_comm_t* comm, uint64_t channelBytes, int c) {
  return (mk_dev_channel_t*)((char*)comm + sizeof(mk_dev_comm_t) + (uint64_t)c * channelBytes);
}

/* Kernel arguments: work items sit in the work FIFO (host-pinned memory,
 * read by the kernel), `nWorks` of them from `workOffset`. */
typedef struct {
  mk_dev_comm_t* comm;
  const char* workBuf;
  uint32_t workMask;
  uint32_t workOffset;
  uint32_t nWorks;
  uint32_t channelLo;
} mk_kernel_args_t;

#define MK_KERNEL_THREADS 512
#define MK_KERNEL_NAME "mkccl_kernel"

#endif
