/* transport-net: connections between ranks through the net plugin the core
 * chose, driven by the proxy thread (DESIGN.md, "Transports").
 *
 * Each side keeps a buffer of MKCCL_STEPS steps plus the control words
 * shared with the executor: the control words in host memory, the steps in
 * host memory too, or in GPU memory the plugin reaches (GPUDirect RDMA,
 * transport_net_gdr.c). Send: the executor fills a
 * slot and publishes size and tail; the proxy isends it and, once the send
 * completes, frees the slot with head. Recv: the proxy posts irecvs into
 * free slots, publishes tail as they complete (after an iflush when the data
 * went to GPU memory and the plugin needs one); the executor consumes and
 * frees with head, and the proxy tells the plugin (irecvConsumed) when the
 * plugin asked for it. All step numbers are global to the connection, so an
 * op never touches a slot an earlier op still holds.
 *
 * Point-to-point connections of all channels to one peer share one net comm
 * pair (NCCL_NET_SHARED_COMMS): tags tell the channels apart, and the proxy
 * posts their receives together as one grouped irecv (up to maxRecvs).
 *
 * Point-to-point connections draw their step slots from one pool per
 * (channel, direction) (NCCL_NET_SHARED_BUFFERS, transport_net_pool.c): the
 * proxy grants each step a slot and tells the executor where it is through
 * connFifo (MKCCL_MODE_OFFSET), so staging grows with channels, not with
 * peers.
 *
 * On host communicators a send connection takes PTR-mode steps
 * (MKCCL_CONN_PTR_READ): a registered send buffer is posted as addresses,
 * and the proxy sends each step from there under the net plugin's
 * registration of the user's range (transport_net_reg.c), or copies it
 * into its staging slot where that registration is refused. A receive op
 * whose sub carries its part of a registered buffer (userBuff, nbytes) has
 * its steps land there, each published in PTR mode at its place. */
#ifndef TRANSPORT_NET_H
#define TRANSPORT_NET_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "net/nccl_net.h"
#include "transport/mkccl_transport_v1.h"

#define NET_SHARED_MAX 256

/* One net comm shared by the p2p connections of every channel to a peer. */
typedef struct {
  int used;
  int peer, isSend, netDev;
  void* listenComm; /* recv side, until accepted */
  void* netComm;
  int needConsumed; /* the plugin asked for irecvConsumed on this comm */
  int refs;
} transport_net_shared_t;

/* A pool's registration with one net comm (regMr per comm that uses it). */
typedef struct {
  void* netComm;
  void* mhandle;
  int refs;
} transport_net_pool_reg_t;

#define NET_POOL_MAX (2 * 64) /* channels x directions */
#define NET_POOL_MAX_REGS 512 /* net comms one pool is registered with */

/* The step slots shared by the p2p connections of one channel and
 * direction. Slots are granted in one order per pool (tickets, see
 * transport_net_pool.c) and each is held by one step until that step is done. */
typedef struct {
  int used;
  int channelId, isSend;
  int stepSize;
  char* buff;            /* MKCCL_SHARED_STEPS * stepSize */
  int onDevice;          /* buff is GPU memory (GPUDirect RDMA) */
  uint32_t freeMask;     /* bit i: slot i free */
  uint64_t tickets;      /* subs that took a ticket (at op start) */
  uint64_t serving;      /* the ticket whose sub may take slots now */
  int refs;              /* connections using it */
  int nregs;
  transport_net_pool_reg_t regs[NET_POOL_MAX_REGS];
} transport_net_pool_t;

/* A user's registration (ncclCommRegister) as registered with one net
 * comm; mhandle NULL: the plugin refused it (such steps are copied). */
typedef struct {
  void* base;
  size_t size;
  void* netComm;
  void* mhandle;
} transport_net_ureg_t;

typedef struct {
  const mkcclTransportServices_v1* services;
  const ncclNet_v12_t* net;
  void* netContext;
  int maxRecvs;        /* grouped receives the plugin takes (device 0's properties) */
  int sharedComms;     /* NCCL_NET_SHARED_COMMS */
  int forceFlush;      /* MKCCL_NET_FORCE_FLUSH: flush host receives too (tests) */
  int offload;         /* the net reports a device type other than HOST: no shared comms, no grouping */
  int sharedBuffers;   /* NCCL_NET_SHARED_BUFFERS: p2p steps from per-channel pools (OFFSET mode) */
  int gdrLevel, gdrRead; /* NCCL_NET_GDR_LEVEL (path type), NCCL_NET_GDR_READ; -1 unset */
  int gdrSaid;         /* bit per direction (1 recv, 2 send): its GPUDirect choice was said at INFO */
  int gdrFallbackSaid; /* a refused GPU registration was said at INFO */
  transport_net_shared_t shared[NET_SHARED_MAX];
  transport_net_pool_t* pools[NET_POOL_MAX];
  /* What this communicator holds, for the core's stats (read from another thread). */
  uint64_t stagingBytes;
  int nPools, nConns;
  uint64_t offsetSteps;  /* steps granted a pool slot (OFFSET mode) */
  int gdrConns, hostConns; /* connected: step buffers (or pool) in GPU / host memory */
  int gdrFallbacks;      /* GPU step buffers moved to host memory: the plugin refused them */
  int dmaBuf;            /* the plugin claims NCCL_PTR_DMABUF and the core lends dmaBufFd */
  int dmaBufRegs;        /* GPU registrations made through dma-buf */
  int dmaBufSaid;        /* the first dma-buf registration, or its refusal, was said at INFO */
  /* PTR mode (transport_net_reg.c). */
  int ptrSend;           /* MKCCL_NET_PTR on a host communicator: send connections take PTR steps */
  int ptrRecv;           /* and receives may land in place (not with a device offload: it unpacks) */
  int regFault;          /* MKCCL_NET_REG_FAULT: user buffers' regMr fails (tests) */
  pthread_mutex_t regLock;
  transport_net_ureg_t* regs;
  int nRegs, capRegs;
  uint64_t ptrBytes;     /* PTR bytes sent from the user's buffer */
  uint64_t ptrCopiedBytes; /* PTR bytes copied into staging first */
  uint64_t ptrRecvBytes; /* bytes received into the user's buffer in place */
} transport_net_ctx_t;

typedef struct {
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  int32_t rank;   /* the listening rank, for logs */
  int32_t shared; /* 1: no handle, use the comm shared with this peer */
} transport_net_connect_info_t;

typedef struct {
  transport_net_ctx_t* ctx;
  int isSend;
  int netDev;
  int peer;
  int channelId;
  int tag;               /* the channel: tells shared connections apart */
  int stepSize;
  char* buff;            /* MKCCL_STEPS * stepSize; NULL with a pool */
  int onDevice;          /* buff is GPU memory (GPUDirect RDMA); a pool says its own */
  int forceFlushProp;    /* the net device's forceFlush property */
  transport_net_pool_t* pool; /* p2p in OFFSET mode: steps live in the pool */
  int poolSlot[MKCCL_STEPS];  /* pool slot of the step in FIFO entry i, -1: none */
  uint64_t reclaimed;    /* recv with a pool: steps below this gave their slot back */
  uint64_t sendDone;     /* send with a pool: steps whose isend completed */
  mkcclSendMem_v1* sendMem;
  mkcclRecvMem_v1* recvMem;
  void* listenComm;      /* recv side until accepted (unshared) */
  void* netComm;         /* sendComm or recvComm */
  /* send side: the peer's handle, kept across connect calls because a net
   * plugin may keep its in-progress connect state in it (NCCL's ABI lets it) */
  transport_net_connect_info_t peerInfo;
  int havePeerInfo;
  transport_net_shared_t* shared; /* non-NULL when netComm is shared */
  int wantShared;        /* set up as a shared (p2p) connection */
  int peerShared;        /* the peer said: use the shared comm */
  void* mhandle;
  int needFlush;         /* iflush after each receive */
  int needConsumed;      /* irecvConsumed after the executor consumed */
  void* consumeReq[MKCCL_STEPS]; /* completed receives awaiting irecvConsumed */
  ncclNetDeviceHandle_v12_t* devHandle; /* from the core's netDeviceHandleAlloc, freed after the comm */
  int devHandleAsked;
  ncclNetDeviceHandle_v12_t* offloadHandle; /* devHandle once the plugin filled it: the executor unpacks */
  uint64_t step;         /* proxy's step counter: next op's base rounds up from here */
  /* Ops on one connection go in step order (see net_turn): end step of the
   * last op whose steps were all handed to the plugin (isend/irecv), of the
   * last whose receives all completed (test), and of the last whose steps
   * all went back to the executor (head / tail). */
  uint64_t postedEnd;
  uint64_t receivedEnd;
  uint64_t handedEnd;
} transport_net_conn_t;

/* Shared comms (transport_net_shared.c). */
transport_net_shared_t* transport_net_shared_find(transport_net_ctx_t* ctx, int peer, int isSend, int netDev);
transport_net_shared_t* transport_net_shared_add(transport_net_ctx_t* ctx, int peer, int isSend, int netDev);
void transport_net_shared_release(transport_net_ctx_t* ctx, transport_net_shared_t* s);

/* Step buffer memory (transport_net_buff.c): GPU memory when onDevice. */
ncclResult_t transport_net_buff_alloc(transport_net_ctx_t* ctx, size_t bytes, int onDevice, char** buff);
void transport_net_buff_free(transport_net_ctx_t* ctx, char* buff, int onDevice);
/* Registers GPU memory with the plugin: through a dma-buf of the range
 * (regMrDmaBuf) where ctx->dmaBuf and the core gives one, else, or when
 * that is refused, regMr(NCCL_PTR_CUDA). */
ncclResult_t transport_net_reg_cuda(transport_net_ctx_t* ctx, void* netComm, void* ptr, size_t bytes, void** mhandle);
/* regMr with NCCL_PTR_CUDA for GPU memory (transport_net_reg_cuda), NCCL_PTR_HOST otherwise. When
 * the plugin refuses GPU memory and the buffer is `movable` (nobody holds
 * it yet), it is moved to host memory (*buff, *onDevice change) and
 * registered there; the first such move of a communicator is said at INFO. */
ncclResult_t transport_net_buff_register(transport_net_ctx_t* ctx, void* netComm, char** buff, size_t bytes,
                                         int* onDevice, int movable, void** mhandle);

/* Pools (transport_net_pool.c). */
/* onDevice: a new pool goes in GPU memory (one that exists keeps its own). */
ncclResult_t transport_net_pool_attach(transport_net_ctx_t* ctx, int channelId, int isSend, int stepSize,
                                       int onDevice, transport_net_pool_t** out);
void transport_net_pool_detach(transport_net_ctx_t* ctx, transport_net_pool_t* pool);
ncclResult_t transport_net_pool_register(transport_net_ctx_t* ctx, transport_net_pool_t* pool, void* netComm,
                                         void** mhandle);
void transport_net_pool_deregister(transport_net_ctx_t* ctx, transport_net_pool_t* pool, void* netComm);
/* A free slot, or -1. */
int transport_net_pool_take(transport_net_pool_t* pool);
void transport_net_pool_put(transport_net_pool_t* pool, int slot);
int transport_net_pool_free_slots(const transport_net_pool_t* pool);

/* User buffers in PTR mode (transport_net_reg.c). */
void transport_net_reg_init(transport_net_ctx_t* ctx);
void transport_net_reg_fini(transport_net_ctx_t* ctx);
/* c's net plugin registration of the user's range holding [ptr, ptr +
 * bytes), made on first use; NULL: send it from staging (said once). */
void* transport_net_reg_mhandle(transport_net_ctx_t* ctx, transport_net_conn_t* c, const void* ptr, size_t bytes);
/* Whether c may move user buffers in place: always on host ranks; on GPU
 * ranks where its step buffers (or pool) are GPU memory the plugin took,
 * so it takes the user's GPU buffers too. */
int transport_net_conn_user_ok(const transport_net_conn_t* c);
/* A PTR step of `bytes` went out in place (1) or copied (0). */
void transport_net_reg_count(transport_net_ctx_t* ctx, int inPlace, uint64_t bytes);
/* A receive of `bytes` landed in the user's buffer. */
void transport_net_reg_count_recv(transport_net_ctx_t* ctx, uint64_t bytes);
/* Before netComm closes: its registrations of user ranges go. */
void transport_net_reg_drop_comm(transport_net_ctx_t* ctx, void* netComm);
/* The transport's memDeregister. */
void transport_net_mem_deregister(void* tctx, void* base, size_t size);

ncclResult_t transport_net_send_progress(void* tctx, mkcclProxyOp_v1* op);
ncclResult_t transport_net_recv_progress(void* tctx, mkcclProxyOp_v1* op);

#endif
