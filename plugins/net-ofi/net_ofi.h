/* net-ofi: the libfabric net plugin (NCCL net ABI v10..v12).
 *
 * One device per libfabric domain (NIC) of the best provider fi_getinfo
 * offers (provider_rank below) or the one FI_PROVIDER names. Each device has
 * one RDM endpoint, CQ and AV, opened on first use and shared by every comm
 * on it; a mutex serialises all calls into the endpoint. Messages are tagged
 * within the B tag bits the provider matches (its mem_tag_format; 64 for
 * most, 63 for libfabric's `net`):
 *
 *   data:    bit B-1 = 0 | receiver comm id (B-33 bits) | NCCL tag (32 bits)
 *   control: bit B-1 = 1 | type (3 bits) | zero bits | id (32 bits)
 *
 * The receiver's comm id is handed to the sender by the connection handshake
 * (REQ: connector -> listener, ACK: listener -> connector), so data tags are
 * unique per endpoint without directed receives. Messages of one tag match in
 * order because the endpoint is opened with FI_ORDER_SAS. */
#ifndef NET_OFI_H
#define NET_OFI_H

#include <pthread.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <stdint.h>
#include <time.h>

#include "net/nccl_net.h"

#define OFI_MAX_DEVS 16
#define OFI_MAX_RECVS 8
#define OFI_MAX_REQUESTS NCCL_NET_MAX_REQUESTS
#define OFI_ADDR_MAX 96
#define OFI_MAGIC 0x4f464931u /* "OFI1" */

#define OFI_CTRL_REQ 1ULL
#define OFI_CTRL_ACK 2ULL
#define OFI_CTRL_PROBE 3ULL
/* Fewer tag bits leave too few comm ids (B-33 bits): such a provider is not used. */
#define OFI_TAG_BITS_MIN 48

/* ---- logging and parameters (net_ofi_log.c) ---- */
extern ncclDebugLogger_t net_ofi_logger;
/* The logger is set by every init, while comms of an earlier one may log: atomic. */
#define OFI_LOG(level, flags, ...)                                                              \
  do {                                                                                          \
    ncclDebugLogger_t logger_ = __atomic_load_n(&net_ofi_logger, __ATOMIC_RELAXED);             \
    if (logger_) logger_(level, flags, __FILE__, __LINE__, "NET/OFI " __VA_ARGS__);             \
  } while (0)
#define OFI_WARN(...) OFI_LOG(NCCL_LOG_WARN, NCCL_NET, __VA_ARGS__)
#define OFI_INFO(flags, ...) OFI_LOG(NCCL_LOG_INFO, flags, __VA_ARGS__)
#include "mkccl_plugin_params.h"
/* net_ofi_param_<NAME>(): typed accessors over net_ofi_params.def. */
#define PLUGIN_PARAM(name, type, def, help) PLUGIN_PARAM_PROTO(net_ofi_param_, name, type)
#include "net_ofi_params.def"
#undef PLUGIN_PARAM
/* Read once at init: test() consults them on every call. */
extern int64_t net_ofi_probe_ms, net_ofi_peer_timeout_ms;
void net_ofi_params_load(void);

/* ---- objects that own operations: comms, listens, connect stages ---- */
typedef struct net_ofi_dev net_ofi_dev_t;
enum { OFI_OBJ_SEND = 1, OFI_OBJ_RECV, OFI_OBJ_LISTEN, OFI_OBJ_STAGE };

/* First member of each: an object closed while the provider still holds one
 * of its operations becomes a zombie, freed once they all completed. */
typedef struct net_ofi_obj {
  int type;
  net_ofi_dev_t* dev;
  int inFlight;            /* operations the provider holds */
  struct net_ofi_obj* nextZombie;
} net_ofi_obj_t;

/* ---- one libfabric operation in flight ---- */
typedef enum { OFI_OP_DATA = 0, OFI_OP_CTRL, OFI_OP_PROBE_RECV, OFI_OP_PROBE_SEND, OFI_OP_FLUSH } net_ofi_op_kind_t;

typedef struct {
  struct fi_context2 fctx; /* first: the provider's scratch space (FI_CONTEXT/FI_CONTEXT2) */
  net_ofi_op_kind_t kind;
  net_ofi_obj_t* obj;      /* whose inFlight it counts (NULL: the device's own) */
  void* owner;             /* data and flush: the request */
  int index;               /* which receive of a grouped request */
  int inFlight;
  int err;                 /* fi errno of its CQ error entry, 0 when fine */
  size_t len;              /* bytes a receive got */
} net_ofi_op_t;

/* Posts op (already filled by the caller) and counts it; caller holds the lock. */
static inline void net_ofi_op_posted(net_ofi_op_t* op) {
  op->inFlight = 1;
  op->err = 0;
  if (op->obj) op->obj->inFlight++;
}

/* ---- devices (net_ofi_prov.c discovers, net_ofi_dev.c opens) ---- */
typedef struct {
  struct fi_info* info;    /* the domain's fi_info, owned */
  char name[64];
  char* pciPath;           /* realpath of the NIC's PCI device, or NULL */
  int speedMbps;
  int hmem;                /* FI_HMEM with CUDA usable */
  int rma;                 /* FI_RMA: flush by a read of our own buffer */
  int tagBits;             /* tag bits the provider matches (B above) */
} net_ofi_nic_t;

/* The tag layout above, for a NIC's tag width. */
static inline uint32_t net_ofi_id_mask(const net_ofi_nic_t* n) {
  return (uint32_t)((1ULL << (n->tagBits - 33)) - 1);
}
static inline uint64_t net_ofi_ctrl_tag(const net_ofi_nic_t* n, uint64_t type, uint32_t id) {
  return (1ULL << (n->tagBits - 1)) | (type << (n->tagBits - 4)) | id;
}
static inline uint64_t net_ofi_data_tag(const net_ofi_nic_t* n, uint32_t commId, int tag) {
  return ((uint64_t)(commId & net_ofi_id_mask(n)) << 32) | (uint32_t)tag;
}

struct net_ofi_dev {
  pthread_mutex_t lock;
  const net_ofi_nic_t* nic;
  int refs;                /* comms and listens using it; closed at finalize when 0 */
  struct fid_fabric* fabric;
  struct fid_domain* domain;
  struct fid_ep* ep;
  struct fid_cq* cq;
  struct fid_av* av;
  uint64_t mrMode;
  uint64_t nextKey;        /* requested keys when the provider does not pick them */
  uint32_t nextId;         /* comm and listen ids: unique on this endpoint */
  char addr[OFI_ADDR_MAX];
  size_t addrLen;
  fi_addr_t self;          /* our own address in the AV, for flush reads */
  net_ofi_op_t probeRecv;  /* standing receive for peers' liveness probes */
  net_ofi_obj_t* zombies;  /* closed objects whose operations have not drained */
};

int net_ofi_nic_count(void);
const net_ofi_nic_t* net_ofi_nic_get(int dev);
ncclResult_t net_ofi_nics_discover(void);
void net_ofi_nics_release(void);
ncclResult_t net_ofi_props(int dev, ncclNetProperties_v12_t* props);

ncclResult_t net_ofi_dev_acquire(int dev, net_ofi_dev_t** out);
void net_ofi_dev_acquire_ref(net_ofi_dev_t* d); /* one more user of an open device */
void net_ofi_dev_release(net_ofi_dev_t* d);
int net_ofi_devs_close(void); /* endpoints nobody uses; returns how many stay open */
/* Reads the CQ and dispatches completions; caller holds d->lock. */
ncclResult_t net_ofi_dev_progress(net_ofi_dev_t* d);
uint32_t net_ofi_dev_new_id(net_ofi_dev_t* d);

/* ---- memory registration (net_ofi_mr.c) ---- */
typedef struct {
  struct fid_mr* mr;       /* NULL when the provider needs no registration */
  void* desc;
  void* base;
  size_t size;
  int cuda;
} net_ofi_mr_t;

ncclResult_t net_ofi_mr_register(net_ofi_dev_t* d, void* data, size_t size, int type, net_ofi_mr_t** out);
void net_ofi_mr_deregister(net_ofi_dev_t* d, net_ofi_mr_t* mr);
int net_ofi_cuda_device(const void* ptr, int* device);

/* ---- comms and requests ---- */
typedef struct net_ofi_comm net_ofi_comm_t;

typedef struct {
  net_ofi_op_t ops[OFI_MAX_RECVS];
  net_ofi_comm_t* comm;
  int used;
  int n;
  int posted;              /* ops handed to the provider; the rest wait in the comm's backlog */
  int pending;             /* posted ops not yet completed */
  int err;                 /* first fi errno of its operations */
  int sizes[OFI_MAX_RECVS];
  void* buf[OFI_MAX_RECVS];
  size_t len[OFI_MAX_RECVS];
  void* desc[OFI_MAX_RECVS];
  uint64_t tag[OFI_MAX_RECVS];
} net_ofi_req_t;

/* Control messages of the handshake. */
typedef struct {
  uint32_t magic;
  uint32_t type;           /* OFI_CTRL_REQ / OFI_CTRL_ACK */
  uint32_t id;             /* REQ: connector's comm id; ACK: receiver's comm id */
  uint32_t addrLen;
  char addr[OFI_ADDR_MAX]; /* REQ: connector's endpoint address */
} net_ofi_ctrl_msg_t;

struct net_ofi_comm {
  net_ofi_obj_t hdr;       /* OFI_OBJ_SEND or OFI_OBJ_RECV */
  fi_addr_t peer;
  uint32_t id;             /* local id (recv: the id in our data tags) */
  uint32_t remoteId;       /* send: the receiver's id */
  int failed;              /* fi errno once the peer is known broken */
  net_ofi_req_t* backlog;  /* recv: a grouped receive not fully posted yet */
  net_ofi_op_t ctrl;       /* recv: the ACK send */
  net_ofi_op_t probe;      /* liveness probe to the peer */
  struct timespec lastDone;  /* last completion (or probe) on this comm */
  struct timespec probeSince;
  struct timespec stallSince; /* first EAGAIN of a run of them */
  int stalled;
  net_ofi_req_t reqs[OFI_MAX_REQUESTS];
  net_ofi_ctrl_msg_t msg;  /* recv: the ACK it sent */
  net_ofi_mr_t* msgMr;
  net_ofi_mr_t* flushMr;   /* host word flush reads land in */
  uint64_t flushWord;
};

typedef struct {
  uint32_t magic;
  uint32_t listenId;
  uint32_t addrLen;
  char addr[OFI_ADDR_MAX];
  void* stage;             /* connector's progress between connect calls */
} net_ofi_handle_t;

_Static_assert(sizeof(net_ofi_handle_t) <= NCCL_NET_HANDLE_MAXSIZE, "handle too big");

typedef struct {
  int trafficClass;
} net_ofi_ctx_t;

ncclResult_t net_ofi_listen(void* ctx, int dev, void* handle, void** listenComm);
ncclResult_t net_ofi_connect(void* ctx, int dev, void* handle, void** sendComm);
ncclResult_t net_ofi_accept(void* listenComm, void** recvComm);
ncclResult_t net_ofi_close_listen(void* listenComm);
ncclResult_t net_ofi_close_comm(void* comm, int type);
ncclResult_t net_ofi_comm_create(net_ofi_dev_t* d, int type, fi_addr_t peer, net_ofi_comm_t** out);
/* Frees an object whose operations have all completed (or whose endpoint is closed). */
void net_ofi_obj_free(net_ofi_obj_t* o);
/* What listens and connect stages own beside their memory (net_ofi_conn.c). */
void net_ofi_obj_extra_free(net_ofi_obj_t* o);
/* Cancels, drains for a bounded time, frees or parks as a zombie; caller holds the lock. */
void net_ofi_obj_close(net_ofi_obj_t* o, net_ofi_op_t* const* ops, int nops);
/* Posts a liveness probe when the comm has waited long; caller holds the lock. */
void net_ofi_comm_probe(net_ofi_comm_t* c);
/* The provider answered EAGAIN: after MKCCL_OFI_PEER_TIMEOUT_MS of that the peer is dead. */
void net_ofi_comm_stall(net_ofi_comm_t* c);
void net_ofi_op_done(net_ofi_op_t* op, int err, size_t len);

ncclResult_t net_ofi_reg_mr(void* comm, void* data, size_t size, int type, void** mhandle);
ncclResult_t net_ofi_reg_mr_dmabuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                                   void** mhandle);
ncclResult_t net_ofi_dereg_mr(void* comm, void* mhandle);
ncclResult_t net_ofi_isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                           void** request);
ncclResult_t net_ofi_irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                           void** phandles, void** request);
ncclResult_t net_ofi_iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request);
ncclResult_t net_ofi_test(void* request, int* done, int* sizes);

/* fi errno -> NCCL result: the peer's fault or ours. */
ncclResult_t net_ofi_result(int fiErr);

#endif
