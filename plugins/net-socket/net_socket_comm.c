/* Life of a connection: allocation, its request pool, the options of its
 * sockets, failure, and the release of every fd and thread. */
#include "net_socket_comm.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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

net_socket_request_t* net_socket_request_get(net_socket_comm_t* comm) {
  for (int i = 0; i < NET_SOCKET_MAX_REQUESTS; i++)
    if (!comm->reqs[i].used) return &comm->reqs[i];
  return NULL;
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

void net_socket_comm_stop(net_socket_comm_t* comm) {
  /* Every helper joined before any eventfd closes: a failing helper wakes
   * all the others, and must never write to a closed (or reused) fd. */
  for (int t = comm->nThreads - 1; t >= 0; t--) {
    net_socket_helper_t* h = &comm->helpers[t];
    if (h->started) {
      atomic_store(&h->stop, 1);
      net_socket_helper_wake(h);
      pthread_join(h->thread, NULL);
      h->started = 0;
    }
  }
  for (int t = comm->nThreads - 1; t >= 0; t--)
    if (comm->helpers[t].efd >= 0) {
      close(comm->helpers[t].efd);
      comm->helpers[t].efd = -1;
    }
  for (int s = comm->nSocks - 1; s >= 0; s--) sock_close(&comm->data[s].fd);
  sock_close(&comm->ctrlFd);
}

void net_socket_comm_free(net_socket_comm_t* comm) {
  if (!comm) return;
  net_socket_comm_stop(comm);
  free(comm->helpers);
  free(comm->data);
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
