/* net-example: a plain TCP net plugin, the smallest one that is complete.
 *
 * The whole design:
 * - One device: one address of one network interface (NET_EXAMPLE_IFNAME,
 *   else the first interface up that is not loopback, else loopback).
 * - listen() opens a listening TCP socket and writes its address into the
 *   handle; the core carries the handle to the peer, whose connect() connects
 *   to it; accept() takes the connection. One socket per comm, and one
 *   direction per comm: a send comm only writes, a recv comm only reads.
 * - On the wire every message is a 16-byte header (size, tag, magic) and
 *   then its bytes. A receive may be larger than the message: test()
 *   reports the size that came.
 * - isend()/irecv() only queue a request in the comm's window of
 *   NCCL_NET_MAX_REQUESTS; test() moves bytes for the comm's oldest
 *   unfinished requests with non-blocking socket calls, and never waits.
 * - Messages match receives in order, one receive per irecv (maxRecvs 1);
 *   a message whose tag is not the one its receive was posted with is an
 *   error, never a silent mix-up.
 * - Host memory only (NCCL_PTR_HOST): the kernel copies from and into the
 *   caller's buffers, so registering memory is a no-op.
 * - Errors are returned, never waited out: a peer that dies closes its
 *   socket, and the next test() on either side returns ncclRemoteError.
 *
 * Files: net_example_plugin.c (parameters, the device, init, the exported
 * tables), net_example_conn.c (listen/connect/accept/close, regMr),
 * net_example_xfer.c (isend/irecv/test: the data path). */
#ifndef NET_EXAMPLE_H
#define NET_EXAMPLE_H

#include <netinet/in.h>
#include <net/if.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "net/nccl_net.h" /* the NCCL net ABI, all versions (mkccl's abi/ folder) */

/* ---- logging: through the logger the core hands to init ---- */
extern ncclDebugLogger_t net_example_logger;
#define NX_LOG(level, ...)                                                             \
  do {                                                                                 \
    if (net_example_logger) net_example_logger(level, NCCL_NET, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
#define NX_WARN(...) NX_LOG(NCCL_LOG_WARN, __VA_ARGS__)
#define NX_INFO(...) NX_LOG(NCCL_LOG_INFO, __VA_ARGS__)

/* ---- the device ---- */
typedef union {
  struct sockaddr sa;
  struct sockaddr_in sin;
  struct sockaddr_in6 sin6;
} nx_addr_t;

typedef struct {
  char ifname[IF_NAMESIZE];
  nx_addr_t addr;  /* the interface's address; listen() binds it with port 0 */
  char* pciPath;   /* /sys/devices/... of the NIC, NULL for a virtual one */
  int speed;       /* Mbps */
} nx_device_t;

extern nx_device_t net_example_dev;
extern int net_example_ndev; /* 1 once init found an interface */

socklen_t nx_addr_len(const nx_addr_t* a);

/* ---- the wire ---- */
#define NX_MAGIC 0x6e786d31u /* "nxm1": catches a stream that lost its framing */
typedef struct {
  uint64_t size; /* bytes after this header */
  int32_t tag;
  uint32_t magic;
} nx_header_t;

/* ---- requests and comms ---- */
typedef enum {
  NX_REQ_FREE = 0, /* the slot may take a new isend/irecv */
  NX_REQ_POSTED,   /* bytes still to move */
  NX_REQ_DONE      /* all moved; test() reports it once, then frees the slot */
} nx_req_state_t;

typedef struct nx_comm nx_comm_t;

typedef struct {
  nx_comm_t* comm;
  nx_req_state_t state;
  char* data;
  size_t size;     /* send: the message; recv: what came (known once the header is in) */
  size_t capacity; /* recv: the buffer */
  int tag;
  nx_header_t hdr; /* send: what goes first; recv: what came first */
  size_t moved;    /* bytes of header + data moved so far */
} nx_request_t;

#define NX_MAX_REQUESTS NCCL_NET_MAX_REQUESTS /* the window the ABI lets the caller have per comm */

struct nx_comm {
  int fd;
  int isSend;
  ncclResult_t error; /* the first failure: every later test() reports it */
  uint64_t posted;    /* requests posted; the next goes to reqs[posted % NX_MAX_REQUESTS] */
  uint64_t finished;  /* requests whose bytes all moved; they finish in post order */
  nx_request_t reqs[NX_MAX_REQUESTS];
};

typedef struct {
  int fd;
} nx_listen_comm_t;

/* What listen() writes and connect() reads: the core copies these bytes to
 * the peer. `connecting` is connect()'s own state between its calls on the
 * peer's side (listen() leaves it NULL). */
typedef struct {
  nx_addr_t addr;
  nx_comm_t* connecting;
} nx_handle_t;
_Static_assert(sizeof(nx_handle_t) <= NCCL_NET_HANDLE_MAXSIZE, "the handle must fit NCCL_NET_HANDLE_MAXSIZE");

/* net_example_conn.c */
ncclResult_t net_example_listen(void* ctx, int dev, void* handle, void** listenComm);
ncclResult_t net_example_connect(void* ctx, int dev, void* handle, void** sendComm,
                                 ncclNetDeviceHandle_v12_t** sendDevComm);
ncclResult_t net_example_accept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v12_t** recvDevComm);
ncclResult_t net_example_reg_mr(void* comm, void* data, size_t size, int type, void** mhandle);
ncclResult_t net_example_reg_mr_dmabuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                                       void** mhandle);
ncclResult_t net_example_dereg_mr(void* comm, void* mhandle);
ncclResult_t net_example_close_send(void* sendComm);
ncclResult_t net_example_close_recv(void* recvComm);
ncclResult_t net_example_close_listen(void* listenComm);

/* net_example_xfer.c */
ncclResult_t net_example_isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                               void** request);
ncclResult_t net_example_irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                               void** phandles, void** request);
ncclResult_t net_example_iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request);
ncclResult_t net_example_test(void* request, int* done, int* sizes);

#endif
