/* Life of a connection: allocation, helper threads, the data-socket rings,
 * failure, and the release of every fd and thread. */
#include "net_socket_comm.h"
#include "net_socket_unexp.h"
#include "net_socket_unpack.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net_socket_chunk.h"
#include "net_socket_log.h"
#include "net_socket_params.h"
#include "sock/sock.h"

net_socket_comm_t* net_socket_comm_alloc(int isSend, int nSocks, int nThreads) {
  net_socket_comm_t* comm = calloc(1, sizeof(*comm));
  if (!comm) return NULL;
  comm->isSend = isSend;
  comm->ctrlFd = -1;
  comm->nSocks = nSocks;
  comm->nThreads = nSocks > 0 ? nThreads : 0;
  int64_t minChunk = net_socket_param_NCCL_SOCKET_MIN_TASKSIZE();
  int64_t inlineMax = net_socket_param_NCCL_SOCKET_INLINE();
  comm->minChunk = minChunk > 0 ? (size_t)minChunk : 1;
  comm->inlineMax = inlineMax > 0 ? (size_t)inlineMax : 0;
  int64_t spinUs = net_socket_param_MKCCL_SOCKET_HELPER_SPIN_US();
  comm->helperSpinNs = spinUs > 0 ? spinUs * 1000 : 0;
  int64_t unexpMax = net_socket_param_MKCCL_SOCKET_UNEXPECTED_MAX_BYTES();
  comm->unexpMaxBytes = unexpMax > 0 ? (size_t)unexpMax : 0;
  if (nSocks > 0) {
    comm->data = calloc((size_t)nSocks, sizeof(*comm->data));
    comm->helpers = calloc((size_t)comm->nThreads, sizeof(*comm->helpers));
    if (!comm->data || !comm->helpers) {
      free(comm->data);
      free(comm->helpers);
      free(comm);
      return NULL;
    }
    for (int s = 0; s < nSocks; s++) comm->data[s].fd = -1;
    for (int t = 0; t < comm->nThreads; t++) comm->helpers[t].efd = -1;
  }
  for (int r = 0; r < NET_SOCKET_MAX_REQUESTS; r++) comm->reqs[r].comm = comm;
  return comm;
}

void net_socket_comm_sockopts(int fd, int trafficClass) {
  int64_t timeoutMs = net_socket_param_MKCCL_SOCKET_USER_TIMEOUT_MS();
  if (timeoutMs > 0) {
    unsigned int t = timeoutMs > (int64_t)UINT32_MAX ? UINT32_MAX : (unsigned int)timeoutMs;
    if (setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &t, sizeof(t)) != 0)
      NS_INFO(NCCL_NET, "TCP_USER_TIMEOUT %u ms not set: %s", t, strerror(errno));
  }
  if (trafficClass >= 0) {
    int domain = AF_INET;
    socklen_t len = sizeof(domain);
    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len);
    int rc = domain == AF_INET6 ? setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &trafficClass, sizeof(trafficClass))
                                : setsockopt(fd, IPPROTO_IP, IP_TOS, &trafficClass, sizeof(trafficClass));
    if (rc != 0) NS_INFO(NCCL_NET, "traffic class %d not set: %s", trafficClass, strerror(errno));
  }
}

ncclResult_t net_socket_comm_start(net_socket_comm_t* comm) {
  for (int t = 0; t < comm->nThreads; t++) {
    net_socket_helper_t* h = &comm->helpers[t];
    h->comm = comm;
    h->index = t;
    h->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (h->efd < 0) return NS_FAIL(ncclSystemError, "eventfd failed: %s", strerror(errno));
    int rc = pthread_create(&h->thread, NULL, net_socket_helper_main, h);
    if (rc != 0) return NS_FAIL(ncclSystemError, "helper thread %d not started: %s", t, strerror(rc));
    h->started = 1;
  }
  return ncclSuccess;
}

static void net_socket_helper_wake(net_socket_helper_t* h) {
  uint64_t one = 1;
  ssize_t n = write(h->efd, &one, sizeof(one)); /* EAGAIN: already pending, as good */
  (void)n;
}

void net_socket_comm_free(net_socket_comm_t* comm) {
  if (!comm) return;
  /* Every helper joined before any eventfd closes: a failing helper wakes
   * all the others, and must never write to a closed (or reused) fd. */
  for (int t = comm->nThreads - 1; t >= 0; t--) {
    net_socket_helper_t* h = &comm->helpers[t];
    if (h->started) {
      atomic_store(&h->stop, 1);
      net_socket_helper_wake(h);
      pthread_join(h->thread, NULL);
    }
  }
  for (int t = comm->nThreads - 1; t >= 0; t--)
    if (comm->helpers[t].efd >= 0) close(comm->helpers[t].efd);
  for (int s = comm->nSocks - 1; s >= 0; s--) sock_close(&comm->data[s].fd);
  sock_close(&comm->ctrlFd);
  free(comm->helpers);
  free(comm->data);
  net_socket_unpack_free(comm->unpack);
  net_socket_unexp_free(comm);
  free(comm);
}

ncclResult_t net_socket_comm_fail(net_socket_comm_t* comm, ncclResult_t res) {
  int expected = ncclSuccess;
  if (atomic_compare_exchange_strong(&comm->error, &expected, (int)res)) {
    if (comm->ctrlFd >= 0) shutdown(comm->ctrlFd, SHUT_RDWR);
    for (int s = 0; s < comm->nSocks; s++)
      if (comm->data[s].fd >= 0) shutdown(comm->data[s].fd, SHUT_RDWR);
    for (int t = 0; t < comm->nThreads; t++)
      if (comm->helpers[t].efd >= 0) net_socket_helper_wake(&comm->helpers[t]);
    return res;
  }
  return (ncclResult_t)expected;
}

ncclResult_t net_socket_comm_push(net_socket_comm_t* comm, int s, char* data, size_t size, net_socket_sub_t* sub) {
  net_socket_data_t* d = &comm->data[s];
  uint32_t tail = atomic_load_explicit(&d->tail, memory_order_relaxed);
  if (tail - atomic_load_explicit(&d->head, memory_order_acquire) >= NET_SOCKET_RING)
    return NS_FAIL(ncclInternalError, "data socket %d: task ring full (%d tasks)", s, NET_SOCKET_RING);
  d->ring[tail % NET_SOCKET_RING] = (net_socket_task_t){data, size, sub};
  /* seq_cst store, then seq_cst load of `sleeping`: pairs with the helper's
   * store of `sleeping` then load of `tail`, so one of us sees the other. */
  atomic_store(&d->tail, tail + 1);
  net_socket_helper_t* h = &comm->helpers[s % comm->nThreads];
  if (atomic_load(&h->sleeping)) net_socket_helper_wake(h);
  return ncclSuccess;
}

ncclResult_t net_socket_comm_schedule(net_socket_comm_t* comm, net_socket_sub_t* sub, char* data, size_t size,
                                      size_t chunkSize) {
  int n = net_socket_chunk_count(size, chunkSize);
  if (n > comm->nSocks)
    return NS_FAIL(ncclInternalError, "message of %zu bytes in chunks of %zu needs %d sockets, comm has %d", size,
                   chunkSize, n, comm->nSocks);
  atomic_store_explicit(&sub->pending, n, memory_order_relaxed);
  for (int i = 0; i < n; i++) {
    size_t off, len;
    net_socket_chunk_get(size, chunkSize, i, &off, &len);
    NS_CHECK(net_socket_comm_push(comm, (int)(comm->nextSock % (uint32_t)comm->nSocks), data + off, len, sub));
    comm->nextSock++;
  }
  return ncclSuccess;
}
