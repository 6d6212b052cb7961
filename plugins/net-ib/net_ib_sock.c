/* The handshake socket: non-blocking TCP, every call returns at once. */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "net_ib.h"
#include "net_ib_hca.h"

static socklen_t net_ib_sockaddr(const net_ib_addr_t* a, struct sockaddr_storage* ss) {
  memset(ss, 0, sizeof(*ss));
  if (a->family == AF_INET) {
    struct sockaddr_in* s = (struct sockaddr_in*)ss;
    s->sin_family = AF_INET;
    s->sin_port = a->port;
    memcpy(&s->sin_addr, a->addr, 4);
    return sizeof(*s);
  }
  struct sockaddr_in6* s = (struct sockaddr_in6*)ss;
  s->sin6_family = AF_INET6;
  s->sin6_port = a->port;
  memcpy(&s->sin6_addr, a->addr, 16);
  return sizeof(*s);
}

static void net_ib_addr_from(const struct sockaddr* sa, net_ib_addr_t* a) {
  memset(a, 0, sizeof(*a));
  a->family = sa->sa_family;
  if (sa->sa_family == AF_INET) {
    const struct sockaddr_in* s = (const struct sockaddr_in*)sa;
    a->port = s->sin_port;
    memcpy(a->addr, &s->sin_addr, 4);
  } else {
    const struct sockaddr_in6* s = (const struct sockaddr_in6*)sa;
    a->port = s->sin6_port;
    memcpy(a->addr, &s->sin6_addr, 16);
  }
}

/* IPv4 before IPv6, never link-local IPv6 (needs a scope), loopback last. */
int net_ib_sock_ifaddr(net_ib_addr_t* out) {
  net_ib_hca_list_t list;
  if (net_ib_hca_parse(net_ib_param_NCCL_SOCKET_IFNAME(), &list) != 0) {
    IB_WARN("NCCL_SOCKET_IFNAME \"%s\" is malformed", net_ib_param_NCCL_SOCKET_IFNAME());
    return -1;
  }
  struct ifaddrs* ifs;
  if (getifaddrs(&ifs) != 0) return -1;
  int bestScore = 0;
  for (struct ifaddrs* i = ifs; i; i = i->ifa_next) {
    if (!i->ifa_addr || !(i->ifa_flags & IFF_UP)) continue;
    int fam = i->ifa_addr->sa_family;
    if (fam != AF_INET && fam != AF_INET6) continue;
    if (!net_ib_hca_match(&list, i->ifa_name, -1)) continue;
    if (fam == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6*)i->ifa_addr)->sin6_addr)) continue;
    int score = (i->ifa_flags & IFF_LOOPBACK) ? 1 : 3;
    score += fam == AF_INET;
    if (score > bestScore) {
      bestScore = score;
      net_ib_addr_from(i->ifa_addr, out);
      out->port = 0;
    }
  }
  freeifaddrs(ifs);
  return bestScore ? 0 : -1;
}

static int net_ib_sock_open(int family) {
  int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd >= 0) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  return fd;
}

int net_ib_sock_listen(const net_ib_addr_t* at, int* fdOut, net_ib_addr_t* bound) {
  struct sockaddr_storage ss;
  socklen_t len = net_ib_sockaddr(at, &ss);
  int fd = net_ib_sock_open(at->family);
  if (fd < 0) return -1;
  if (bind(fd, (struct sockaddr*)&ss, len) != 0 || listen(fd, 64) != 0) goto fail;
  len = sizeof(ss);
  if (getsockname(fd, (struct sockaddr*)&ss, &len) != 0) goto fail;
  net_ib_addr_from((struct sockaddr*)&ss, bound);
  *fdOut = fd;
  return 0;
fail:
  close(fd);
  return -1;
}

int net_ib_sock_connect_start(const net_ib_addr_t* to, int* fdOut) {
  struct sockaddr_storage ss;
  socklen_t len = net_ib_sockaddr(to, &ss);
  int fd = net_ib_sock_open(to->family);
  if (fd < 0) return -1;
  if (connect(fd, (struct sockaddr*)&ss, len) != 0 && errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  *fdOut = fd;
  return 0;
}

int net_ib_sock_connect_done(int fd) {
  struct pollfd p = {fd, POLLOUT, 0};
  if (poll(&p, 1, 0) <= 0) return 0;
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) return -1;
  return 1;
}

int net_ib_sock_accept(int lfd, int* fdOut) {
  int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  *fdOut = fd;
  return 1;
}

int net_ib_sock_xfer(int fd, void* buf, size_t len, size_t* off, int send) {
  while (*off < len) {
    ssize_t n = send ? write(fd, (char*)buf + *off, len - *off) : read(fd, (char*)buf + *off, len - *off);
    if (n > 0) {
      *off += (size_t)n;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return 0;
    return -1; /* error, or EOF: the peer went away mid-handshake */
  }
  return 1;
}

int net_ib_sock_alive(int fd) {
  struct pollfd p = {fd, POLLIN, 0};
  if (poll(&p, 1, 0) <= 0) return 0;
  if (p.revents & (POLLERR | POLLHUP)) return -1;
  char c;
  ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) ? -1 : 0;
}
