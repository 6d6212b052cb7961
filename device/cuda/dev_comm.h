/* What a GPU kernel sees of a communicator: per channel its ring (the
 * trees follow from it: sched_tree_ranks) and the connections it uses, in
 * device memory. Filled by the host (plan/launch), read by
 * device/cuda/kernels.cu. Plain C so both sides share it. */
#ifndef MKCCL_CUDA_DEV_COMM_H
#define MKCCL_CUDA_DEV_COMM_H

#include <stdint.h>

#include "device/common/work.h"
#include "transport/mkccl_transport_v1.h"

#define MK_DEV_MAX_CHANNELS 64

typedef struct {
  char* buff;                 /* Simple protocol step buffers */
  int32_t stepSize;
  uint32_t flags;             /* MKCCL_CONN_* */
  volatile uint64_t* tail;
  volatile uint64_t* head;
  mkcclConnFifo_v1* connFifo;
  uint64_t step;              /* the GPU executor's step counter, kept across kernels */
  void* netDevHandle;         /* receives land elsewhere (net device UNPACK): the plugin's handle, else NULL */
  char* llBuff;               /* LL protocol lines (in the receiver's memory), NULL: no LL */
  int32_t llStepSize;         /* bytes of lines per step (half of it data) */
  int32_t pad;
  uint64_t headSeen;          /* send side: the head as the kernel read it last (it only grows) */
} mk_dev_conn_t;

/* A channel's connections, per kind and peer: collectives' (connection 0:
 * the ring's to ringNext and from ringPrev, the trees' to and from parent
 * and children) and point-to-point's (connection 1). Per peer, because a
 * ring and a tree that join the same two ranks share the connection, and so
 * its step counter. */
enum { MK_DEV_COLL_SEND, MK_DEV_COLL_RECV, MK_DEV_P2P_SEND, MK_DEV_P2P_RECV, MK_DEV_CONN_KINDS };

typedef struct {
  int32_t ringPrev, ringNext, ringIndex;
  int32_t pad;
  const int32_t* ringRanks; /* [nRanks] (device memory): ranks in ring order */
  /* [MK_DEV_CONN_KINDS][nRanks] (device memory): sized by the communicator,
   * so a small one's device state stays small (a table of 64 peers for
   * every channel made the GPU memory left after init/destroy cycles drift,
   * test_gpu_fault leak). */
  mk_dev_conn_t* conns;
} mk_dev_channel_t;

/* Channel ch's connection of `kind` with `peer`, in a communicator of nRanks. */
#define MK_DEV_CONN(ch, nRanks, kind, peer) (&(ch)->conns[(size_t)(kind) * (size_t)(nRanks) + (size_t)(peer)])

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
  /* Progress is written to the status rows only when the watchdog or the
   * probe reads them: each write crosses PCIe, and the system fence of every
   * step waits for those writes (they would make a small AllReduce many
   * times slower). A timeout is marked in the row always. */
  uint32_t traceStatus;
  uint32_t traceCap;            /* MKCCL_GPU_TRACE: events `trace` holds (0: no trace) */
  uint64_t* trace;              /* device memory: [0] count, then (time, code) pairs of channel 0's slices */
  mk_dev_channel_t channels[MK_DEV_MAX_CHANNELS];
} mk_dev_comm_t;

/* Kernel arguments. A launch of at most MK_ARGS_WORKS items carries them
 * here (`inlined`), in the kernel's parameter space; a larger one leaves them
 * in the work FIFO (host-pinned memory), `nWorks` of them from
 * `workOffset`. Every CTA reading its items across PCIe costs a launch
 * far more than the items do; parameters cost none. */
#define MK_ARGS_WORKS 8
typedef struct {
  mk_dev_comm_t* comm;
  const char* workBuf;
  uint32_t workMask;
  uint32_t workOffset;
  uint32_t nWorks;
  uint32_t channelLo;
  uint32_t inlined;
  uint32_t pad[3];
  mk_work_t works[MK_ARGS_WORKS];
} mk_kernel_args_t;

#define MK_KERNEL_THREADS 512
#define MK_KERNEL_NAME "mkccl_kernel"
#define MK_KERNEL_LL_NAME "mkccl_kernel_ll" /* FLAT and LL rings only (small items) */

#endif
