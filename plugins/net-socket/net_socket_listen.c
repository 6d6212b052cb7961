/* Receive side of connection setup. accept() takes every pending socket from
 * the kernel, reads hellos as they arrive, drops foreign ones (wrong proto,
 * version or magic), and groups the others by connId: a connection is
 * returned once its control socket and all its data sockets are in. */
#include <stdlib.h>
#include <string.h>

#include "net_socket_comm.h"
#include "net_socket_dev.h"
#include "net_socket_handle.h"
#include "net_socket_helper.h"
#include "net_socket_log.h"
#include "net_socket_params.h"
#include "net_socket_setup.h"

/* Sockets with an unfinished hello a listener holds at once; more wait in
 * the kernel's backlog. */
#define NET_SOCKET_MAX_PENDING 256

typedef struct {
  int fd;
  size_t got;
  net_socket_hello_t hello;
} net_socket_pending_t;

typedef struct {
  uint64_t connId;
  int have;
  int fds[NET_SOCKET_MAX_SOCKS + 1]; /* data sockets, then control */
} net_socket_group_t;

typedef struct {
  int fd;
  uint64_t magic;
  int nSocks, nThreads;
  int trafficClass;
  int nPending;
  net_socket_pending_t pending[NET_SOCKET_MAX_PENDING];
  int nGroups, capGroups;
  net_socket_group_t* groups;
} net_socket_listen_t;

ncclResult_t net_socket_listen(int dev, void* opaqueHandle, void** listenComm, int trafficClass, int maxFlows) {
  const net_socket_dev_t* d = net_socket_dev_get(dev);
  if (!d) return ncclInvalidArgument;
  if (!opaqueHandle || !listenComm) return NS_FAIL(ncclInvalidArgument, "listen: NULL handle or comm");
  net_socket_layout_t layout = net_socket_layout_resolve(net_socket_param_NCCL_SOCKET_NTHREADS(),
                                                         net_socket_param_NCCL_NSOCKS_PERTHREAD(), d->vendor,
                                                         d->cpus, maxFlows);
  if (layout.clamped)
    NS_WARN("%s/%s out of range: using %d threads and %d sockets", "NCCL_SOCKET_NTHREADS",
            "NCCL_NSOCKS_PERTHREAD", layout.nThreads, layout.nSocks);
  net_socket_listen_t* l = calloc(1, sizeof(*l));
  if (!l) return NS_FAIL(ncclSystemError, "listen: out of memory");
  sock_addr_t bound;
  if (sock_listen(&d->addr, 0, &l->fd, &bound) != SOCK_OK) {
    free(l);
    return NS_FAIL(ncclSystemError, "listen on %s: %s", d->name, sock_error());
  }
  l->magic = net_socket_random64();
  l->nSocks = layout.nSocks;
  l->nThreads = layout.nThreads;
  l->trafficClass = trafficClass;
  net_socket_handle_t h; /* the host's buffer may be unaligned: fill a copy */
  memset(&h, 0, sizeof(h));
  h.magic = l->magic;
  h.addr = bound;
  h.nSocks = l->nSocks;
  h.nThreads = l->nThreads;
  memcpy(opaqueHandle, &h, sizeof(h));
  char text[SOCK_ADDR_STRLEN];
  NS_INFO(NCCL_NET, "listening on %s (%s), %d helper threads, %d data sockets", d->name,
          sock_addr_to_string(&bound, text, sizeof(text), 1), l->nThreads, l->nSocks);
  *listenComm = l;
  return ncclSuccess;
}

static void net_socket_group_close(net_socket_group_t* g, int nfds) {
  for (int i = nfds - 1; i >= 0; i--) sock_close(&g->fds[i]);
}

static net_socket_group_t* net_socket_group_find(net_socket_listen_t* l, uint64_t connId) {
  for (int g = 0; g < l->nGroups; g++)
    if (l->groups[g].connId == connId) return &l->groups[g];
  if (l->nGroups == l->capGroups) {
    int cap = l->capGroups ? 2 * l->capGroups : 4;
    net_socket_group_t* grown = realloc(l->groups, (size_t)cap * sizeof(*grown));
    if (!grown) return NULL;
    l->groups = grown;
    l->capGroups = cap;
  }
  net_socket_group_t* g = &l->groups[l->nGroups++];
  g->connId = connId;
  g->have = 0;
  for (int i = 0; i <= NET_SOCKET_MAX_SOCKS; i++) g->fds[i] = -1;
  return g;
}

/* A complete hello: file the socket in its group, or drop it. */
static void net_socket_listen_file(net_socket_listen_t* l, int fd, const net_socket_hello_t* hi) {
  const char* why = NULL;
  if (hi->proto != NET_SOCKET_WIRE_PROTO) why = "not an mkccl net-socket peer";
  else if (hi->version != NET_SOCKET_WIRE_VERSION) why = "protocol version differs";
  else if (hi->magic != l->magic) why = "wrong magic";
  else if (hi->nSocks != (uint32_t)l->nSocks || hi->index > hi->nSocks) why = "socket count or index out of range";
  net_socket_group_t* g = why ? NULL : net_socket_group_find(l, hi->connId);
  if (!why && !g) why = "out of memory";
  if (!why && g->fds[hi->index] >= 0) why = "duplicate socket index";
  if (why) {
    NS_WARN("rejected a connection on the listening socket: %s (magic %llx, expected %llx)", why,
            (unsigned long long)hi->magic, (unsigned long long)l->magic);
    sock_close(&fd);
    return;
  }
  g->fds[hi->index] = fd;
  g->have++;
}

/* Reads hellos; sockets that close or fail before theirs is complete are dropped. */
static void net_socket_listen_hellos(net_socket_listen_t* l) {
  for (int p = 0; p < l->nPending;) {
    net_socket_pending_t* pe = &l->pending[p];
    int rc = sock_recv_some(pe->fd, &pe->hello, sizeof(pe->hello), &pe->got);
    if (rc != SOCK_OK) {
      NS_INFO(NCCL_NET, "dropped an incoming connection before its hello: %s", sock_error());
      sock_close(&pe->fd);
    } else if (pe->got == sizeof(pe->hello)) {
      net_socket_listen_file(l, pe->fd, &pe->hello);
      pe->fd = -1;
    }
    if (pe->fd < 0) *pe = l->pending[--l->nPending];
    else p++;
  }
}

static ncclResult_t net_socket_listen_take(net_socket_listen_t* l, net_socket_group_t* g, void** recvComm) {
  net_socket_comm_t* comm = net_socket_comm_alloc(0, l->nSocks, l->nThreads);
  if (!comm) return NS_FAIL(ncclSystemError, "accept: out of memory");
  for (int s = 0; s < l->nSocks; s++) comm->data[s].fd = g->fds[s];
  comm->ctrlFd = g->fds[l->nSocks];
  for (int i = 0; i <= l->nSocks; i++) {
    net_socket_comm_sockopts(g->fds[i], l->trafficClass);
    g->fds[i] = -1; /* the comm owns them now */
  }
  *g = l->groups[--l->nGroups];
  ncclResult_t res = net_socket_helpers_start(comm);
  if (res != ncclSuccess) {
    net_socket_comm_free(comm);
    return res;
  }
  *recvComm = comm;
  return ncclSuccess;
}

ncclResult_t net_socket_accept(void* listenComm, void** recvComm) {
  net_socket_listen_t* l = listenComm;
  if (!l || !recvComm) return NS_FAIL(ncclInvalidArgument, "accept: NULL listen comm or output");
  while (l->nPending < NET_SOCKET_MAX_PENDING) {
    int fd = -1;
    if (sock_accept_try(l->fd, &fd, NULL) != SOCK_OK)
      return NS_FAIL(ncclSystemError, "accept: %s", sock_error());
    if (fd < 0) break;
    l->pending[l->nPending++] = (net_socket_pending_t){fd, 0, {0}};
  }
  net_socket_listen_hellos(l);
  for (int g = 0; g < l->nGroups; g++)
    if (l->groups[g].have == l->nSocks + 1) return net_socket_listen_take(l, &l->groups[g], recvComm);
  *recvComm = NULL;
  return ncclSuccess;
}

ncclResult_t net_socket_close_listen(void* listenComm) {
  net_socket_listen_t* l = listenComm;
  if (!l) return ncclSuccess;
  for (int g = l->nGroups - 1; g >= 0; g--) net_socket_group_close(&l->groups[g], l->nSocks + 1);
  free(l->groups);
  for (int p = l->nPending - 1; p >= 0; p--) sock_close(&l->pending[p].fd);
  sock_close(&l->fd);
  free(l);
  return ncclSuccess;
}
