/* mkccl transport ABI, version 1 (ours: NCCL has no transport plugins).
 *
 * A transport moves steps between two ranks' executors. It has a send and a
 * recv side; each side has an executor part (setup/connect/free: run by the
 * core while connecting, they produce the addresses the executor uses) and a
 * proxy part (proxySetup/proxyConnect/proxyFree/proxyProgress: run for the
 * proxy thread, NULL when the transport needs no proxy). The contract between
 * the executor and the proxy is the connection FIFO protocol:
 *   - NCCL_STEPS slots; slot = step % MKCCL_STEPS;
 *   - producer: writes data, then connFifo[slot].size, then tail = step+1;
 *   - consumer: reads, then clears connFifo[slot].size = -1, then head = step+1;
 *   - size == -1 means empty; mode says where the data is (NORMAL: buffs +
 *     slot*stepSize, OFFSET: buffs + connFifo[slot].offset, PTR: connFifo[slot].ptr).
 * Frozen: fields are only appended. Exported symbol: mkcclTransportPlugin_v1. */
#ifndef MKCCL_ABI_TRANSPORT_V1_H
#define MKCCL_ABI_TRANSPORT_V1_H

#include <stddef.h>
#include <stdint.h>

#include "mkccl_plugin_v1.h"
#include "nccl.h"
#include "net/nccl_net.h"

#define MKCCL_TRANSPORT_SYMBOL_V1 "mkcclTransportPlugin_v1"
#define MKCCL_TRANSPORT_ABI_V1 1

#define MKCCL_STEPS 8                /* slots per connection */
#define MKCCL_SHARED_STEPS 16        /* slots of a shared (OFFSET mode) pool per channel */
#define MKCCL_PROXY_MAX_SUBS 64      /* sub-operations in one proxy op */
#define MKCCL_CONNECT_INFO_BYTES 256 /* what setup() sends to the peer's connect() */

#define MKCCL_MODE_NORMAL 0
#define MKCCL_MODE_OFFSET 1
#define MKCCL_MODE_PTR 2

#define MKCCL_PROTO_LL 0
#define MKCCL_PROTO_LL128 1
#define MKCCL_PROTO_SIMPLE 2
#define MKCCL_NUM_PROTOCOLS 3

/* One FIFO slot; lives in memory both the executor and the proxy see. */
typedef struct {
  int32_t mode;
  int32_t offset;
  int64_t size; /* -1: empty */
  void* ptr;
} mkcclConnFifo_v1;

/* Control words, each on its own cache line: the producer's tail and the
 * consumer's head are written by different agents. Every head or tail word
 * is followed by a 32-bit count of host threads sleeping on it (futex), so
 * whoever advances it can wake them (mkccl_conn_fifo_v1.h). */
typedef struct {
  volatile uint64_t head; /* consumer -> producer: steps freed */
  volatile uint32_t headWaiters;
  char pad[116];
} mkcclSendMem_v1;

typedef struct {
  volatile uint64_t tail; /* producer -> consumer: steps published */
  volatile uint32_t tailWaiters;
  char pad[116];
  mkcclConnFifo_v1 connFifo[MKCCL_STEPS];
} mkcclRecvMem_v1;

/* Where the executor finds a connection, filled by send/recv connect(). */
#define MKCCL_CONN_USE_FIFO 0x1    /* publish sizes (send) / read modes (recv) in connFifo */
#define MKCCL_CONN_DEVICE_MEM 0x2  /* buffers are GPU memory */
#define MKCCL_CONN_SHARED 0x4      /* OFFSET mode: slot offsets come from connFifo */
#define MKCCL_CONN_PROXY 0x8       /* a proxy op must be posted for each operation */
/* With MKCCL_CONN_PROXY: proxyProgress of this connection touches no state
 * another connection's does (its own net comm, its own buffers), so the
 * core may progress its ops at the same time as other channels' ops, on
 * another thread. Without it, all such ops progress one at a time. */
#define MKCCL_CONN_PROXY_LANE 0x10
/* PTR mode: PTR-mode slots carry an address in the sender's process.
 * Send side: whoever consumes the slots reads the data there (the
 * receiving executor through its ptrRead, or the transport's proxy, which
 * sends it from there), so the sender may post them; data published that
 * way stays in the sender's buffer until the connection says the step is
 * done (head past it; with MKCCL_CONN_SHARED, where head counts grants,
 * the slot's size back to -1). Recv side: any slot may come so; ptrRead
 * and ptrCtx are set. */
#define MKCCL_CONN_PTR_READ 0x20
/* PTR mode for shareable host memory only (abi/transport/mkccl_host_mem_v1.h):
 * as MKCCL_CONN_PTR_READ, but the receiver can read only addresses in such
 * memory, so the sender posts PTR slots only from it. Recv side: ptrRead and
 * ptrCtx are set. */
#define MKCCL_CONN_PTR_MAP 0x40
/* With MKCCL_CONN_PTR_READ, send side: the consumer reads any address of
 * the sender's process (a GPU peer in the same process, through unified
 * addressing), so the sender may post any send buffer as its address,
 * registered or not. */
#define MKCCL_CONN_PTR_ANY 0x80
/* PTR mode for addresses of the receiver's own process (send side of a
 * GPU P2P connection to another process): the receiving kernel reads a
 * PTR slot where it points, so the sender posts one only for a buffer it
 * knows the receiver's address of (one in a window the receiver maps),
 * and posts that address. */
#define MKCCL_CONN_PTR_PEER 0x100
typedef struct {
  char* buffs[MKCCL_NUM_PROTOCOLS]; /* step buffers; NULL: protocol unavailable */
  int32_t stepSize[MKCCL_NUM_PROTOCOLS];
  volatile uint64_t* tail;          /* send: written by executor; recv: polled by executor */
  volatile uint64_t* head;          /* send: polled by executor; recv: written by executor */
  mkcclConnFifo_v1* connFifo;
  uint32_t flags;
  void* netDeviceHandle;            /* net device offload (UNPACK), NULL for HOST */
  /* Appended (the core zeroes the struct before connect, so transports
   * that predate them leave them NULL). MKCCL_CONN_PTR_READ on the recv
   * side: copy `bytes` at the sender's address `src` into dst; 0, or the
   * errno that stopped it. */
  int (*ptrRead)(void* ptrCtx, void* dst, const void* src, size_t bytes);
  void* ptrCtx;
  /* Appended; may be NULL. Recv side with ptrRead: where in this process
   * the `bytes` at the sender's address `src` can be read (a mapping of the
   * sender's memory, valid while the sender's step is outstanding), or NULL
   * to read them with ptrRead. The executor then copies them itself, with
   * the stores it picks. */
  const void* (*ptrMap)(void* ptrCtx, const void* src, size_t bytes);
} mkcclConnInfo_v1;

/* The two ranks of a connection, as the core knows them. */
typedef struct {
  int rank;
  uint64_t hostHash;
  uint64_t pidHash;
  int pid;
  int cudaDev;    /* -1: host rank */
  int64_t busId;  /* -1: no GPU */
  int pathType;   /* topology path type from self to this peer (PATH_*), PATH_NET across hosts */
  int netDev;     /* net device index the core chose for this peer and channel */
} mkcclPeer_v1;

typedef struct {
  const mkcclPeer_v1* self;
  const mkcclPeer_v1* peer;
  int channelId;
  int connIndex;
  int deviceMem;      /* executor is a GPU: buffers must be device-visible */
  int buffSizes[MKCCL_NUM_PROTOCOLS];
  int shared;         /* use a shared (OFFSET mode) buffer pool (p2p operations) */
} mkcclConnSetup_v1;

/* Progress of one sub-operation (one connection of one channel). */
typedef struct {
  void* conn;           /* the proxy side of the connection */
  int channelId;
  int peer;
  uint64_t nsteps;      /* steps to move */
  int64_t nbytes;       /* bytes of userBuff's part, -1 without one (steps carry their own sizes) */
  uint64_t base, posted, received, transmitted, done;
  void* requests[MKCCL_STEPS];
  int groupSize;        /* receives posted together with the next groupSize-1 subs */
  void* userBuff;       /* a p2p receive into a registered buffer: this channel's part of it, which
                         * the transport may land steps in (PTR mode); NULL otherwise */
  void* mhandle;        /* free for the transport: its registration of userBuff */
  void* profilerHandle;
  int64_t userData[4];  /* free for the transport */
} mkcclProxySubOp_v1;

#define MKCCL_PROXY_OP_READY 0
#define MKCCL_PROXY_OP_PROGRESS 1
#define MKCCL_PROXY_OP_DONE 2
typedef struct {
  int state;
  int idle;             /* out: 1 when the call did nothing */
  int protocol;
  int sliceSteps;
  int chunkSteps;
  int chunkSize;
  int nsubs;
  int done;             /* subs finished */
  uint64_t opCount;
  int pattern;          /* what the op belongs to, for logs and profilers */
  mkcclProxySubOp_v1 subs[MKCCL_PROXY_MAX_SUBS];
  /* Optional, for profilers (appended: transports that do not know them
   * leave stepBytesKnown 0): the bytes of sub s's step k, at
   * [s][k % MKCCL_STEPS] with k counted from the op's first step, set when a
   * send is posted and when a receive completed (0 while it is posted). */
  int stepBytesKnown;
  int64_t stepBytes[MKCCL_PROXY_MAX_SUBS][MKCCL_STEPS];
} mkcclProxyOp_v1;

/* What the core lends a transport. */
typedef struct mkcclTransportServices_v1 {
  size_t size;
  ncclDebugLogger_t log;
  void* ctx; /* first argument of every service */
  /* Memory the executor and the proxy both see: pinned host memory when a GPU
   * executor is in use, plain page-aligned memory otherwise. Zeroed. */
  ncclResult_t (*hostAlloc)(void* ctx, size_t bytes, void** ptr);
  ncclResult_t (*hostFree)(void* ctx, void* ptr);
  /* GPU memory on the communicator's device (ncclInvalidUsage on host ranks). */
  ncclResult_t (*deviceAlloc)(void* ctx, size_t bytes, void** ptr);
  ncclResult_t (*deviceFree)(void* ctx, void* ptr);
  /* The net plugin the core chose, through the newest net ABI (ncclNet_v12_t*),
   * and its per-communicator context; NULL when there is none. */
  const void* (*net)(void* ctx, void** netContext);
  /* Parameter values (declared by the transport's mkcclPluginInfo_v1 or the core). */
  int (*paramInt64)(const char* name, int64_t* value);
  /* Abort flag of the communicator: non-zero once aborting. */
  volatile uint32_t* abortFlag;
  int rank;
  int nRanks;
  /* ---- GPU communicators (cudaDev >= 0); NULL on host ranks ---- */
  int cudaDev;
  /* A handle another process of this host can open (64 bytes), for memory
   * from deviceAlloc; and opening/closing a peer's handle. */
  ncclResult_t (*ipcHandle)(void* ctx, void* devPtr, void* handle);
  ncclResult_t (*ipcOpen)(void* ctx, const void* handle, void** devPtr);
  ncclResult_t (*ipcClose)(void* ctx, void* devPtr);
  /* Whether this GPU can access the peer's GPU directly (and, for a peer in
   * this process, enables it). */
  ncclResult_t (*peerAccess)(void* ctx, const mkcclPeer_v1* peer, int* canAccess);
  /* Make host memory (e.g. shared memory) usable by the GPU; *devPtr is the
   * address the GPU uses. */
  ncclResult_t (*hostRegister)(void* ctx, void* ptr, size_t bytes, void** devPtr);
  ncclResult_t (*hostUnregister)(void* ctx, void* ptr);
  /* The device's compute capability (major*10+minor), 0 on host ranks. */
  int sm;
  /* NCCL_P2P_LEVEL as a path type (0 LOC .. 9 SYS), -1 when unset. */
  int p2pLevel;
  /* NCCL_P2P_READ_ENABLE: 1 read, 0 write, -1 unset (the transport decides). */
  int p2pRead;
  /* ---- net device offload (abi/net-device); check `size` before use ---- */
  /* The generic device handle of one side of a net connection, for the net
   * plugin's connect (send) or accept (recv) to fill: *handle = NULL when
   * the communicator's net device type needs none (HOST, or a refused type).
   * Freed with netDeviceHandleFree once the net comm is closed. */
  ncclResult_t (*netDeviceHandleAlloc)(void* ctx, int isRecv, ncclNetDeviceHandle_v12_t** handle);
  /* The proxy must call irecvConsumed for receives of this handle. */
  int (*netDeviceNeedsProxyProgress)(void* ctx, const ncclNetDeviceHandle_v12_t* handle);
  ncclResult_t (*netDeviceHandleFree)(void* ctx, ncclNetDeviceHandle_v12_t* handle);
  /* ---- GPUDirect RDMA (appended; check `size` before use) ---- */
  /* NCCL_NET_GDR_LEVEL as a path type (0 LOC .. 9 SYS), -1 when unset. */
  int netGdrLevel;
  /* NCCL_NET_GDR_READ: 1 sends read GPU memory too, 0 they do not, -1 unset
   * (the transport decides). */
  int netGdrRead;
  /* ---- registered user buffers (appended; check `size` before use) ---- */
  /* The registration (ncclCommRegister) or window (ncclCommWindowRegister)
   * of this communicator that holds [ptr, ptr + bytes): its start and
   * length. ncclInvalidArgument, outputs untouched, when none does.
   * Callable from any thread. */
  ncclResult_t (*memRegFind)(void* ctx, const void* ptr, size_t bytes, void** base, size_t* size);
  /* ---- topology (appended; check `size` before use) ---- */
  /* The path type (0 LOC .. 9 SYS, NCCL's PATH_* numbering) from this
   * rank's GPU to net device `dev` of the communicator's net plugin; -1
   * when unknown (a host rank, no topology, no such device). */
  int (*netGpuPath)(void* ctx, int dev);
  /* ---- device copies (appended; check `size` before use) ---- */
  /* Copies bytes between two device (or mapped) addresses and waits for it,
   * from any thread (the communicator's context is made current on it): a
   * proxy's fallback where it cannot hand a user's GPU buffer to the net
   * plugin. NULL on host ranks. */
  ncclResult_t (*deviceCopy)(void* ctx, void* dst, const void* src, size_t bytes);
  /* ---- dma-buf (appended; check `size` before use) ---- */
  /* A dma-buf file descriptor of the GPU memory holding [ptr, ptr + bytes),
   * for the net plugin's regMrDmaBuf: *fd (the caller closes it) and
   * *offset, where ptr lies within it. ncclInvalidUsage when dma-buf is
   * off (NCCL_DMABUF_ENABLE=0), the GPU or driver lacks it, or the range
   * is not GPU memory; outputs untouched then. NULL on host ranks. */
  ncclResult_t (*dmaBufFd)(void* ctx, const void* ptr, size_t bytes, int* fd, uint64_t* offset);
  /* ---- P2P direct (appended; check `size` before use) ---- */
  /* !NCCL_P2P_DIRECT_DISABLE: a GPU P2P receiver may read the sender's
   * user buffer in place (MKCCL_CONN_PTR_ANY in one process,
   * MKCCL_CONN_PTR_PEER across processes). */
  int p2pDirect;
} mkcclTransportServices_v1;

/* Whether a services table (a pointer) has `field`: the entries appended
 * after the first release are there only where `size` covers them. */
#define MKCCL_SERVICES_HAS(sv, field) \
  ((sv)->size >= offsetof(mkcclTransportServices_v1, field) + sizeof((sv)->field))

typedef struct {
  ncclResult_t (*setup)(void* tctx, const mkcclConnSetup_v1* args, void* connectInfo, void** conn);
  /* May return ncclInProgress: called again until ncclSuccess. */
  ncclResult_t (*connect)(void* conn, const void* peerConnectInfo, mkcclConnInfo_v1* info);
  ncclResult_t (*free)(void* conn);
  /* Proxy side (NULL if none). proxySetup runs after setup, proxyConnect
   * after connect, both before the first op; proxyProgress runs on the proxy
   * thread; proxyFree before free. */
  ncclResult_t (*proxySetup)(void* conn);
  ncclResult_t (*proxyConnect)(void* conn);
  ncclResult_t (*proxyProgress)(void* tctx, mkcclProxyOp_v1* op);
  ncclResult_t (*proxyFree)(void* conn);
} mkcclTransportSide_v1;

/* What a transport holds for one communicator (see `stats` below). */
typedef struct {
  size_t size;            /* in: sizeof(mkcclTransportStats_v1) of the caller */
  uint64_t stagingBytes;  /* step buffers and pools the transport allocated (control words not counted) */
  int32_t pools;          /* shared (OFFSET mode) pools among them */
  int32_t conns;          /* connections */
  uint64_t offsetSteps;   /* steps that went through a pool slot (OFFSET mode) */
} mkcclTransportStats_v1;

typedef struct {
  size_t size;
  int abiVersion;       /* MKCCL_TRANSPORT_ABI_V1 */
  const char* name;     /* "p2p", "shm", "net" ... */
  ncclResult_t (*init)(const mkcclTransportServices_v1* services, void** tctx);
  /* 1 when this transport can connect self to peer (the core tries
   * transports in manifest priority order and takes the first). */
  ncclResult_t (*canConnect)(void* tctx, const mkcclPeer_v1* self, const mkcclPeer_v1* peer, int* ret);
  mkcclTransportSide_v1 send;
  mkcclTransportSide_v1 recv;
  ncclResult_t (*finalize)(void* tctx);
  /* Appended (check `size`; NULL: none): what the transport holds for this
   * communicator now. Callable from any thread between init and finalize. */
  ncclResult_t (*stats)(void* tctx, mkcclTransportStats_v1* out);
  /* Appended (check `size`; NULL: none): the user deregistered
   * [base, base + size) (ncclCommDeregister, ncclCommWindowDeregister);
   * whatever the transport registered of it with others (a net plugin's
   * regMr) goes now. Called on the deregistering thread, once no operation
   * of the communicator uses the buffer (as NCCL asks of its users). */
  void (*memDeregister)(void* tctx, void* base, size_t size);
} mkcclTransport_v1;

/* The size of mkcclTransport_v1 before `stats` was appended: the smallest a
 * transport may export. */
#define MKCCL_TRANSPORT_V1_MIN_SIZE (offsetof(mkcclTransport_v1, finalize) + sizeof(void*))

#endif
