/* net-example: making and closing connections, and memory registration.
 *
 * connect() and accept() must not block: they return a NULL comm and
 * ncclSuccess while the connection is not there yet, and the core calls
 * them again (connect with the same handle, where it keeps its state). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net_example.h"

static nx_comm_t* nx_comm_new(int fd, int isSend) {
  nx_comm_t* c = calloc(1, sizeof(*c));
  if (!c) return NULL;
  c->fd = fd;
  c->isSend = isSend;
  for (int i = 0; i < NX_MAX_REQUESTS; i++) c->reqs[i].comm = c;
  return c;
}

static void nx_comm_free(nx_comm_t* c) {
  if (!c) return;
  if (c->fd >= 0) close(c->fd); /* requests still in flight are dropped with it */
  free(c);
}

/* Small messages go out at once instead of waiting for more (Nagle). */
static void nx_nodelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

ncclResult_t net_example_listen(void* ctx, int dev, void* handle, void** listenComm) {
  (void)ctx;
  if (dev < 0 || dev >= net_example_ndev || !handle || !listenComm) {
    NX_WARN("NET/example: listen on device %d, there are %d", dev, net_example_ndev);
    return ncclInvalidArgument;
  }
  nx_handle_t* h = handle;
  memset(h, 0, sizeof(*h));
  nx_addr_t addr = net_example_dev.addr;
  if (addr.sa.sa_family == AF_INET6) addr.sin6.sin6_port = 0; /* port 0: the kernel picks a free one */
  else addr.sin.sin_port = 0;
  int fd = socket(addr.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    NX_WARN("NET/example: socket: %s", strerror(errno));
    return ncclSystemError;
  }
  socklen_t len = nx_addr_len(&addr);
  if (bind(fd, &addr.sa, len) != 0 || listen(fd, SOMAXCONN) != 0 || getsockname(fd, &h->addr.sa, &len) != 0) {
    NX_WARN("NET/example: listen on %s: %s", net_example_dev.ifname, strerror(errno));
    close(fd);
    return ncclSystemError;
  }
  nx_listen_comm_t* lc = calloc(1, sizeof(*lc));
  if (!lc) {
    close(fd);
    NX_WARN("NET/example: out of memory");
    return ncclSystemError;
  }
  lc->fd = fd;
  *listenComm = lc;
  return ncclSuccess;
}

ncclResult_t net_example_connect(void* ctx, int dev, void* handle, void** sendComm,
                                 ncclNetDeviceHandle_v12_t** sendDevComm) {
  (void)ctx;
  if (dev < 0 || dev >= net_example_ndev || !handle || !sendComm) {
    NX_WARN("NET/example: connect on device %d, there are %d", dev, net_example_ndev);
    return ncclInvalidArgument;
  }
  nx_handle_t* h = handle;
  *sendComm = NULL;
  if (sendDevComm) *sendDevComm = NULL; /* a host device: no device-side handle */
  nx_comm_t* c = h->connecting;
  if (!c) { /* first call: start a non-blocking connect */
    int fd = socket(h->addr.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      NX_WARN("NET/example: socket: %s", strerror(errno));
      return ncclSystemError;
    }
    c = nx_comm_new(fd, 1);
    if (!c) {
      close(fd);
      NX_WARN("NET/example: out of memory");
      return ncclSystemError;
    }
    if (connect(fd, &h->addr.sa, nx_addr_len(&h->addr)) != 0) {
      if (errno != EINPROGRESS) {
        NX_WARN("NET/example: connect: %s", strerror(errno));
        nx_comm_free(c);
        return ncclSystemError;
      }
      h->connecting = c; /* come back later */
      return ncclSuccess;
    }
  } else { /* a later call: is the connect done? */
    struct pollfd p = {c->fd, POLLOUT, 0};
    if (poll(&p, 1, 0) == 0) return ncclSuccess; /* not yet */
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err) {
      h->connecting = NULL;
      nx_comm_free(c);
      NX_WARN("NET/example: connect: %s", strerror(err));
      return ncclSystemError;
    }
  }
  h->connecting = NULL;
  nx_nodelay(c->fd);
  *sendComm = c;
  return ncclSuccess;
}

ncclResult_t net_example_accept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v12_t** recvDevComm) {
  nx_listen_comm_t* lc = listenComm;
  if (!lc || !recvComm) return ncclInvalidArgument;
  *recvComm = NULL;
  if (recvDevComm) *recvDevComm = NULL;
  int fd = accept4(lc->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
      return ncclSuccess; /* nobody yet: the core calls again */
    NX_WARN("NET/example: accept: %s", strerror(errno));
    return ncclSystemError;
  }
  nx_comm_t* c = nx_comm_new(fd, 0);
  if (!c) {
    close(fd);
    NX_WARN("NET/example: out of memory");
    return ncclSystemError;
  }
  nx_nodelay(fd);
  *recvComm = c;
  return ncclSuccess;
}

/* ---- memory registration ----
 * TCP reads and writes any host memory, so there is nothing to register;
 * the handle only has to be non-NULL. A plugin for an RDMA NIC pins and
 * registers here. Any other pointer type is refused. */
ncclResult_t net_example_reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) {
  (void)data, (void)size;
  if (!comm || !mhandle) return ncclInvalidArgument;
  if (type != NCCL_PTR_HOST) {
    NX_WARN("NET/example: regMr of memory type %d: only host memory (NCCL_PTR_HOST) is supported", type);
    return ncclInvalidArgument;
  }
  *mhandle = comm;
  return ncclSuccess;
}

ncclResult_t net_example_reg_mr_dmabuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                                       void** mhandle) {
  (void)comm, (void)data, (void)size, (void)type, (void)offset, (void)fd, (void)mhandle;
  NX_WARN("NET/example: regMrDmaBuf: DMA-BUF is not supported (ptrSupport is NCCL_PTR_HOST)");
  return ncclInvalidArgument;
}

ncclResult_t net_example_dereg_mr(void* comm, void* mhandle) {
  (void)comm, (void)mhandle;
  return ncclSuccess;
}

/* ---- closing: in any state, without waiting for the peer ----
 * Bytes a completed isend handed to the kernel still reach the peer after
 * close (a graceful FIN follows them). */
ncclResult_t net_example_close_send(void* sendComm) {
  nx_comm_free(sendComm);
  return ncclSuccess;
}

ncclResult_t net_example_close_recv(void* recvComm) {
  nx_comm_free(recvComm);
  return ncclSuccess;
}

ncclResult_t net_example_close_listen(void* listenComm) {
  nx_listen_comm_t* lc = listenComm;
  if (!lc) return ncclSuccess;
  close(lc->fd); /* connections never accepted are reset by the kernel */
  free(lc);
  return ncclSuccess;
}
