/* Send side of connection setup, one step per call: start every socket's
 * connect, then as each completes send its hello; the comm is returned once
 * all hellos are out. Progress lives in the caller's handle between calls. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net_socket_comm.h"
#include "net_socket_dev.h"
#include "net_socket_handle.h"
#include "net_socket_helper.h"
#include "net_socket_log.h"
#include "net_socket_setup.h"
#include "sock/sock.h"

/* Non-blocking TCP connect in two steps (start, then check), which
 * mkccl_sock does not offer: its sock_connect waits for the connection, and
 * the net ABI's connect() must never block. */
static ncclResult_t net_socket_connect_start(const sock_addr_t* addr, int* fd) {
  char text[SOCK_ADDR_STRLEN];
  int s = socket(addr->sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s < 0) return NS_FAIL(ncclSystemError, "socket failed: %s", strerror(errno));
  int one = 1;
  setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (connect(s, &addr->sa, sock_addr_len(addr)) != 0 && errno != EINPROGRESS) {
    int e = errno;
    close(s);
    return NS_FAIL(e == ECONNREFUSED ? ncclRemoteError : ncclSystemError, "connect to %s failed: %s",
                   sock_addr_to_string(addr, text, sizeof(text), 1), strerror(e));
  }
  *fd = s;
  return ncclSuccess;
}

/* *ready = 1 once connected; an error if the connection failed. */
static ncclResult_t net_socket_connect_check(int fd, const sock_addr_t* addr, int* ready) {
  char text[SOCK_ADDR_STRLEN];
  struct pollfd p = {fd, POLLOUT, 0};
  int n = poll(&p, 1, 0);
  if (n < 0 && errno != EINTR) return NS_FAIL(ncclSystemError, "poll failed: %s", strerror(errno));
  if (n <= 0) {
    *ready = 0;
    return ncclSuccess;
  }
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err)
    return NS_FAIL(err == ECONNREFUSED ? ncclRemoteError : ncclSystemError, "connect to %s failed: %s",
                   sock_addr_to_string(addr, text, sizeof(text), 1), strerror(err));
  *ready = 1;
  return ncclSuccess;
}

struct net_socket_connect_stage {
  net_socket_comm_t* comm;
  int nFds; /* nSocks data sockets, then the control socket */
  int fds[NET_SOCKET_MAX_SOCKS + 1];
  int connected[NET_SOCKET_MAX_SOCKS + 1];
  size_t sent[NET_SOCKET_MAX_SOCKS + 1];
  net_socket_hello_t hello[NET_SOCKET_MAX_SOCKS + 1];
};

static void net_socket_stage_free(struct net_socket_connect_stage* st) {
  for (int i = st->nFds - 1; i >= 0; i--) sock_close(&st->fds[i]);
  net_socket_comm_free(st->comm);
  free(st);
}

static ncclResult_t net_socket_stage_new(const net_socket_handle_t* h, int trafficClass,
                                         struct net_socket_connect_stage** out) {
  if (!sock_addr_valid(&h->addr) || h->nSocks < 0 || h->nSocks > NET_SOCKET_MAX_SOCKS || h->nThreads < 0 ||
      h->nThreads > NET_SOCKET_MAX_THREADS || (h->nSocks > 0 && h->nThreads == 0))
    return NS_FAIL(ncclInvalidArgument, "connect: the handle is not a net-socket handle (%d sockets, %d threads)",
                   h->nSocks, h->nThreads);
  struct net_socket_connect_stage* st = calloc(1, sizeof(*st));
  if (!st) return NS_FAIL(ncclSystemError, "connect: out of memory");
  st->comm = net_socket_comm_alloc(1, h->nSocks, h->nThreads);
  if (!st->comm) {
    free(st);
    return NS_FAIL(ncclSystemError, "connect: out of memory");
  }
  uint64_t connId = net_socket_random64();
  for (int i = 0; i <= h->nSocks; i++) {
    st->fds[i] = -1;
    st->hello[i] = (net_socket_hello_t){NET_SOCKET_WIRE_PROTO, NET_SOCKET_WIRE_VERSION, h->magic, connId,
                                        (uint32_t)i, (uint32_t)h->nSocks};
  }
  for (int i = 0; i <= h->nSocks; i++, st->nFds++) {
    ncclResult_t res = net_socket_connect_start(&h->addr, &st->fds[i]);
    if (res != ncclSuccess) {
      net_socket_stage_free(st);
      return res;
    }
    net_socket_comm_sockopts(st->fds[i], trafficClass);
  }
  *out = st;
  return ncclSuccess;
}

/* One pass over the sockets; *done once every hello is sent. */
static ncclResult_t net_socket_stage_progress(struct net_socket_connect_stage* st, const sock_addr_t* addr,
                                              int* done) {
  int left = 0;
  for (int i = 0; i < st->nFds; i++) {
    if (!st->connected[i]) NS_CHECK(net_socket_connect_check(st->fds[i], addr, &st->connected[i]));
    if (st->connected[i] && st->sent[i] < sizeof(st->hello[i]) &&
        sock_send_some(st->fds[i], &st->hello[i], sizeof(st->hello[i]), &st->sent[i]) != SOCK_OK)
      return NS_FAIL(ncclRemoteError, "connect: sending the hello failed: %s", sock_error());
    if (st->sent[i] < sizeof(st->hello[i])) left++;
  }
  *done = left == 0;
  return ncclSuccess;
}

/* The host's handle buffer may be unaligned: read it, and write the stage
 * pointer back, by copy. */
static void net_socket_stage_store(void* opaqueHandle, struct net_socket_connect_stage* st) {
  memcpy((char*)opaqueHandle + offsetof(net_socket_handle_t, stage), &st, sizeof(st));
}

ncclResult_t net_socket_connect(int dev, void* opaqueHandle, void** sendComm, int trafficClass) {
  if (!net_socket_dev_get(dev)) return ncclInvalidArgument;
  if (!opaqueHandle || !sendComm) return NS_FAIL(ncclInvalidArgument, "connect: NULL handle or comm");
  net_socket_handle_t h;
  memcpy(&h, opaqueHandle, sizeof(h));
  if (!h.stage) {
    NS_CHECK(net_socket_stage_new(&h, trafficClass, &h.stage));
    net_socket_stage_store(opaqueHandle, h.stage);
  }
  struct net_socket_connect_stage* st = h.stage;
  int done = 0;
  ncclResult_t res = net_socket_stage_progress(st, &h.addr, &done);
  if (res == ncclSuccess && done) {
    net_socket_comm_t* comm = st->comm;
    for (int s = 0; s < comm->nSocks; s++) comm->data[s].fd = st->fds[s];
    comm->ctrlFd = st->fds[comm->nSocks];
    st->nFds = 0; /* the comm owns the fds now */
    st->comm = NULL;
    res = net_socket_helpers_start(comm);
    if (res != ncclSuccess) net_socket_comm_free(comm);
    else *sendComm = comm;
  } else if (res == ncclSuccess) {
    *sendComm = NULL;
    return ncclSuccess;
  }
  net_socket_stage_free(st);
  net_socket_stage_store(opaqueHandle, NULL);
  return res;
}
