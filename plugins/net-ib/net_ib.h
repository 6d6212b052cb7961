/* net-ib: the InfiniBand / RoCE verbs net plugin (NCCL net ABI v10..v12).
 *
 * One device per active port of an HCA that NCCL_IB_HCA takes. A
 * connection is nqps RC queue pairs (NCCL_IB_QPS_PER_CONNECTION) set up
 * over a TCP socket of the plugin's own (the listen handle holds its
 * address); the socket stays open so that a dead peer shows as EOF.
 *
 * Data moves as in NCCL's IB transport: the receiver RDMA-writes the
 * addresses, sizes, rkeys and tags of its posted buffers into a FIFO in the
 * sender's memory (net_ib_fifo.h); the sender RDMA-writes the message
 * there, split over the QPs, each QP's part ending with an RDMA write with
 * immediate that completes one receive WR of the receiver. For grouped
 * receives the sizes go first into the receiver's sizes FIFO. */
#ifndef NET_IB_H
#define NET_IB_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>

#include "net/nccl_net.h"
#include "net_ib_fifo.h"
#include "net_ib_meta.h"
#include "net_ib_mrcache.h"
#include "net_ib_pool.h"

#define NET_IB_MAX_DEVS 32
#define NET_IB_MAGIC 0x6e49427aU

/* ---- logging and parameters (net_ib_log.c) ---- */
extern ncclDebugLogger_t net_ib_logger;
#define IB_LOG(level, flags, ...) \
  do { if (net_ib_logger) net_ib_logger(level, flags, __FILE__, __LINE__, "NET/IB " __VA_ARGS__); } while (0)
#define IB_WARN(...) IB_LOG(NCCL_LOG_WARN, NCCL_NET, __VA_ARGS__)
#define IB_INFO(flags, ...) IB_LOG(NCCL_LOG_INFO, flags, __VA_ARGS__)
#include "mkccl_plugin_params.h"
/* net_ib_param_<NAME>(): typed accessors over net_ib_params.def. */
#define PLUGIN_PARAM(name, type, def, help) PLUGIN_PARAM_PROTO(net_ib_param_, name, type)
#include "net_ib_params.def"
#undef PLUGIN_PARAM

/* ---- devices (net_ib_dev.c) ---- */
typedef struct {
  char name[64];            /* the HCA, e.g. mlx5_0 */
  int port;
  struct ibv_context* ctx;  /* shared by the ports of one HCA */
  struct ibv_pd* pd;        /* shared by the ports of one HCA */
  int linkLayer;            /* IB_LINK_IB / IB_LINK_ETH */
  uint16_t lid;
  int gidIndex;
  uint8_t gid[16];
  enum ibv_mtu mtu;
  int speedMbps;
  uint64_t guid;
  char* pciPath;
  int gdr;                  /* peer memory: ibv_reg_mr takes CUDA pointers */
  int dmabuf;               /* ibv_reg_dmabuf_mr works */
  int maxQpWr;
  int maxQp;
  net_ib_mrcache_t* mrs;    /* per protection domain */
} net_ib_dev_t;

ncclResult_t net_ib_devs_discover(void);
int net_ib_dev_count(void);
net_ib_dev_t* net_ib_dev_get(int dev);
ncclResult_t net_ib_props(int dev, ncclNetProperties_v12_t* props);

/* ---- the handshake socket (net_ib_sock.c) ---- */
typedef struct {
  uint16_t family;          /* AF_INET / AF_INET6 */
  uint16_t port;            /* network order */
  uint8_t addr[16];
} net_ib_addr_t;

/* The address of the interface NCCL_SOCKET_IFNAME picks (loopback last). */
int net_ib_sock_ifaddr(net_ib_addr_t* out);
int net_ib_sock_listen(const net_ib_addr_t* at, int* fd, net_ib_addr_t* bound);
int net_ib_sock_connect_start(const net_ib_addr_t* to, int* fd);
/* 1 done, 0 not yet, -1 failed. */
int net_ib_sock_connect_done(int fd);
int net_ib_sock_accept(int lfd, int* fd);
int net_ib_sock_xfer(int fd, void* buf, size_t len, size_t* off, int send);
/* 0 while the peer is there; -1 once it closed or died. */
int net_ib_sock_alive(int fd);

/* ---- queue pairs (net_ib_qp.c) ---- */
ncclResult_t net_ib_qp_create(net_ib_dev_t* d, struct ibv_cq* cq, int maxRecv, struct ibv_qp** out);
/* INIT -> RTR -> RTS towards the remote QP qpn of meta. */
ncclResult_t net_ib_qp_connect(net_ib_dev_t* d, struct ibv_qp* qp, uint32_t localPsn, const net_ib_meta_t* remote,
                               uint32_t remoteQpn, int trafficClass);
void net_ib_meta_local(net_ib_dev_t* d, net_ib_meta_t* m);

/* ---- comms and requests ---- */
enum { IB_COMM_SEND = 1, IB_COMM_RECV, IB_COMM_LISTEN };
enum { IB_REQ_SEND = 1, IB_REQ_RECV, IB_REQ_FLUSH };

typedef struct net_ib_comm net_ib_comm_t;

typedef struct net_ib_req {
  int type;
  int index;                 /* in the comm's pool */
  net_ib_comm_t* comm;
  int events;                /* completions still to come */
  int err;                   /* ibv_wc_status of a failed completion */
  int n;
  int sizes[IB_MAX_RECVS];
  uint64_t seq;              /* recv: the FIFO sequence it posted */
  /* send */
  void* data;
  size_t size;
  uint32_t lkey;
  int elem;                  /* the receive element of its FIFO slot it matched */
  struct net_ib_req* group[IB_MAX_RECVS]; /* first of a slot: the sends posted with it */
  int ngroup;
  int groupEvents;
} net_ib_req_t;

struct net_ib_comm {
  int type;
  net_ib_dev_t* dev;
  int fd;                    /* the handshake socket, kept: EOF means the peer is gone */
  int failed;                /* ibv_wc_status or -1: every later call fails */
  int64_t lastAliveMs;
  struct ibv_cq* cq;
  int nqps;
  struct ibv_qp* qps[IB_MAX_QPS];
  uint32_t psn;
  net_ib_pool_t pool;
  net_ib_req_t reqs[IB_MAX_REQUESTS];
  /* send side */
  net_ib_fifo_elem_t* fifo;  /* [IB_MAX_REQUESTS][IB_MAX_RECVS], written by the receiver */
  struct ibv_mr* fifoMr;
  uint64_t fifoHead;
  net_ib_req_t* slotReqs[IB_MAX_RECVS];
  int32_t* sizesOut;         /* grouped sends' sizes, written to the receiver */
  struct ibv_mr* sizesOutMr;
  uint64_t remSizesAddr;
  uint32_t remSizesRkey;
  /* recv side */
  int32_t* sizes;            /* [IB_MAX_REQUESTS][IB_MAX_RECVS], written by the sender */
  struct ibv_mr* sizesMr;
  net_ib_fifo_elem_t* fifoOut; /* what we write into the sender's FIFO */
  struct ibv_mr* fifoOutMr;
  uint64_t remFifoAddr;
  uint32_t remFifoRkey;
  uint64_t fifoTail;
  net_ib_req_t* slotReq[IB_MAX_REQUESTS];
  struct ibv_qp* flushQp;    /* connected to itself: RDMA reads for GPUDirect flushes */
  uint8_t* flushBuf;
  struct ibv_mr* flushMr;
};

/* net_ib_comm.c */
ncclResult_t net_ib_comm_create(net_ib_dev_t* d, int type, int nqps, net_ib_comm_t** out);
void net_ib_comm_destroy(net_ib_comm_t* c);
ncclResult_t net_ib_comm_connect_qps(net_ib_comm_t* c, const net_ib_meta_t* remote, int trafficClass);
void net_ib_comm_meta(net_ib_comm_t* c, net_ib_meta_t* m);

typedef struct {
  uint32_t magic;
  net_ib_addr_t addr;
  uint64_t guid;
  void* stage;               /* connector's progress between connect calls */
} net_ib_handle_t;

_Static_assert(sizeof(net_ib_handle_t) <= NCCL_NET_HANDLE_MAXSIZE, "handle too big");

typedef struct {
  int trafficClass;
} net_ib_ctx_t;

/* net_ib_conn.c */
ncclResult_t net_ib_listen(void* ctx, int dev, void* handle, void** listenComm);
ncclResult_t net_ib_connect(void* ctx, int dev, void* handle, void** sendComm);
ncclResult_t net_ib_accept(void* listenComm, void** recvComm);
ncclResult_t net_ib_close_listen(void* listenComm);
ncclResult_t net_ib_close_comm(void* comm, int type);

/* net_ib_mr.c */
ncclResult_t net_ib_reg_mr(void* comm, void* data, size_t size, int type, void** mhandle);
ncclResult_t net_ib_reg_mr_dmabuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                                  void** mhandle);
ncclResult_t net_ib_dereg_mr(void* comm, void* mhandle);
int net_ib_mr_reg(void* ctx, const net_ib_mr_request_t* req, void** mr, uint32_t* lkey, uint32_t* rkey);
void net_ib_mr_dereg(void* ctx, void* mr);

/* net_ib_xfer.c */
ncclResult_t net_ib_isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                          void** request);
ncclResult_t net_ib_irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                          void** phandles, void** request);
ncclResult_t net_ib_iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request);
ncclResult_t net_ib_test(void* request, int* done, int* sizes);

#endif
