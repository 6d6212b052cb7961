/* What the core hands an executor: one work item per collective (or p2p
 * pair) and channel range, written to the work FIFO. Shared by the host and
 * GPU executors, so plain C with fixed-size fields. */
#ifndef MKCCL_DEVICE_WORK_H
#define MKCCL_DEVICE_WORK_H

#include <stdint.h>

enum {
  MK_COLL_ALLREDUCE = 0,
  MK_COLL_ALLGATHER,
  MK_COLL_REDUCESCATTER,
  MK_COLL_BROADCAST,
  MK_COLL_REDUCE,
  MK_COLL_SENDRECV, /* p2p: Send/Recv, and AlltoAll/Gather/Scatter built from it */
  MK_COLL_COUNT
};

/* NCCL's algorithm and protocol indices (the tuner's cost table uses them),
 * then mkccl's own: FLAT, a small host AllReduce in one step (every rank
 * sends its input to every other and reduces all of them in rank order),
 * chosen by the planner below MKCCL_FLAT_MAX_BYTES, never by a tuner; SYMM,
 * GPU collectives on symmetric windows that load and store the LSA peers'
 * copies directly (plan/plan_symm.c), also the planner's alone.
 * COLLNET_DIRECT: AllReduce reduced by a collnet plugin (kernel-core/collnet),
 * host executor only: every rank is a participant of its own. */
enum { MK_ALGO_TREE = 0, MK_ALGO_RING = 1, MK_ALGO_COLLNET_DIRECT = 2, MK_ALGO_FLAT = 7, MK_ALGO_SYMM = 8, MK_ALGO_COUNT = 9 };
/* FLAT's largest communicator: a rank reads from all the others at once. */
#define MK_FLAT_MAX_RANKS 8
enum { MK_PROTO_LL = 0, MK_PROTO_LL128 = 1, MK_PROTO_SIMPLE = 2, MK_PROTO_COUNT = 3 };

/* Reduction as executors see it (user Avg becomes PREMULSUM or SUMPOSTDIV). */
enum {
  MK_OP_SUM = 0,
  MK_OP_PROD,
  MK_OP_MAX,
  MK_OP_MIN,
  MK_OP_PREMULSUM,  /* local input multiplied by scalar, then sum */
  MK_OP_SUMPOSTDIV, /* sum, result divided by scalar (integer Avg) */
  MK_OP_COUNT
};

#define MK_WORK_IN_PLACE 0x1
/* `scalar` holds the address of the PREMULSUM operand (ncclScalarDevice:
 * device memory on a GPU communicator), which the executor reads when the
 * item runs, at every replay of a captured graph too. */
#define MK_WORK_SCALAR_PTR 0x2
/* A symmetric AllReduce in one shot (every rank reads every peer's input);
 * without it, two shots (reduce-scatter by loads, all-gather by stores). */
#define MK_WORK_SYMM_ONESHOT 0x4
/* p2p, and host ring AllGather and Broadcast: sendbuff lies in a
 * registration (or window), kept until the call returns, so a transport
 * that reads peers' memory may be handed its address instead of its data
 * (PTR mode). MK_WORK_RECV_REG: recvbuff does (host ring AllGather and
 * Broadcast, which hand on what landed there). */
#define MK_WORK_SEND_REG 0x8
/* On a host communicator (p2p, and ring AllGather and Broadcast):
 * sendbuff / recvbuff lies in shareable host memory (ncclMemAlloc's where
 * there is no GPU), which a transport may map in the receiver's process
 * and copy from in place (MKCCL_CONN_PTR_MAP). */
#define MK_WORK_SEND_HOSTMEM 0x10
#define MK_WORK_RECV_HOSTMEM 0x20
/* p2p on a GPU communicator: sendbuff lies in a window the receiver maps,
 * which sees it at sendbuff + symmSend in its own address space, so a
 * connection whose receiver reads there (MKCCL_CONN_PTR_PEER) may be
 * handed that address instead of the data. */
#define MK_WORK_SEND_PEER 0x40
#define MK_WORK_RECV_REG 0x80

/* Bytes of an ncclDataType_t element (0 for an invalid type). */
#if defined(__CUDACC__)
__host__ __device__ __forceinline__
#else
static inline
#endif
int mk_type_size(int type) {
  switch (type) {
    case 0: case 1: case 10: case 11: return 1;  /* int8, uint8, fp8 e4m3, fp8 e5m2 */
    case 6: case 9: return 2;                    /* half, bfloat16 */
    case 2: case 3: case 7: return 4;            /* int32, uint32, float */
    case 4: case 5: case 8: return 8;            /* int64, uint64, double */
    default: return 0;
  }
}

typedef struct __attribute__((aligned(16))) {
  uint8_t coll;
  uint8_t algo;
  uint8_t proto;
  uint8_t type;       /* ncclDataType_t */
  uint8_t op;         /* MK_OP_* */
  uint8_t channelLo;  /* channels [channelLo, channelLo + nChannels) run this item */
  uint8_t nChannels;
  uint8_t flags;
  int32_t root;       /* rooted collectives: the root; p2p: the peer */
  int32_t chunkSize;  /* bytes per chunk (executor and proxy agree on it) */
  uint64_t opCount;
  uint64_t count;     /* elements, NCCL's meaning per collective */
  uint64_t scalar;    /* PREMULSUM / SUMPOSTDIV operand, bits of the element type (or divisor) */
  const void* sendbuff;
  void* recvbuff;
  /* p2p: a send and a receive in one item (either may be absent: bytes < 0) */
  int32_t sendPeer, recvPeer;
  int64_t sendBytes, recvBytes;
  void* recvbuff2;
  /* Symmetric items (MK_ALGO_SYMM): LSA rank r's copy of sendbuff is at
   * sendbuff + symmSend + r * symmSendStride (recvbuff likewise), and its
   * barrier flags at symmRes + r * symmResStride (device/cuda/symm.cuh).
   * p2p items with MK_WORK_SEND_PEER: symmSend as said there. */
  int64_t symmSend, symmRecv;
  uint64_t symmSendStride, symmRecvStride;
  char* symmRes;
  uint64_t symmResStride;
  /* Profiler events this item reports under (host side; NULL when not
   * profiled): [isSend], both the Coll event for a collective, a P2p's
   * Recv [0] and Send [1] events. Parents of KernelCh and ProxyOp events. */
  void* profiler[2];
} mk_work_t;

/* Whether a GPU launch of these n items can run on the LL-only kernel
 * (device/cuda/kernels.cu, mkccl_kernel_ll): each item is FLAT, or a ring
 * collective in LL, on 2+ ranks; that kernel holds no other code. */
static inline int mk_works_ll_only(const mk_work_t* w, int n, int nRanks) {
  if (nRanks < 2 || n < 1) return 0;
  for (int i = 0; i < n; i++)
    if (w[i].proto != MK_PROTO_LL || w[i].coll == MK_COLL_SENDRECV ||
        (w[i].algo != MK_ALGO_FLAT && w[i].algo != MK_ALGO_RING))
      return 0;
  return 1;
}

#endif
