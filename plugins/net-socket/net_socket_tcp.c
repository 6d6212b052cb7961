#include "net_socket_tcp.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net_socket_handle.h"
#include "net_socket_log.h"

ncclResult_t net_socket_tcp_connect_start(const sock_addr_t* addr, int* fd) {
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

ncclResult_t net_socket_tcp_connect_check(int fd, const sock_addr_t* addr, int* ready) {
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

uint64_t net_socket_random64(void) {
  uint64_t v = 0;
  if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v) && v != 0) return v;
  struct timespec ts; /* no entropy yet: mix what differs between processes and calls */
  clock_gettime(CLOCK_MONOTONIC, &ts);
  static uint64_t counter;
  v = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 16) ^ ++counter;
  v ^= v >> 33;
  v *= 0xff51afd7ed558ccdull;
  v ^= v >> 33;
  return v ? v : 1;
}
