/* Listening, connecting, accepting and moving bytes on non-blocking TCP
 * sockets, each wait bounded by a deadline and an abort flag. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sock/sock_internal.h"

/* "1.2.3.4:5" of the connected peer, for error texts. */
static const char* sock_peer_text(int fd, char* buf, size_t len) {
  sock_addr_t a;
  socklen_t alen = sizeof(a);
  memset(&a, 0, sizeof(a));
  if (getpeername(fd, &a.sa, &alen) != 0) {
    snprintf(buf, len, "fd %d", fd);
    return buf;
  }
  return sock_addr_to_string(&a, buf, len, 1);
}

void sock_close(int* fd) {
  if (fd && *fd >= 0) {
    close(*fd);
    *fd = -1;
  }
}

static void sock_nodelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int sock_listen(const sock_addr_t* addr, int backlog, int* fd, sock_addr_t* bound) {
  char text[SOCK_ADDR_STRLEN];
  if (!addr || !sock_addr_valid(addr) || !fd) return sock_fail(SOCK_EINVAL, "listen: bad address");
  int s = socket(addr->sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s < 0) return sock_fail(SOCK_ESYS, "socket failed: %s", strerror(errno));
  if (sock_addr_port(addr) != 0) { /* a fixed port (NCCL_COMM_ID) must be reusable at once */
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  }
  if (bind(s, &addr->sa, sock_addr_len(addr)) != 0) {
    int e = errno;
    close(s);
    return sock_fail(SOCK_ESYS, "bind to %s failed: %s", sock_addr_to_string(addr, text, sizeof(text), 1),
                     strerror(e));
  }
  if (listen(s, backlog > 0 ? backlog : SOMAXCONN) != 0) {
    int e = errno;
    close(s);
    return sock_fail(SOCK_ESYS, "listen failed: %s", strerror(e));
  }
  sock_addr_t b;
  socklen_t blen = sizeof(b);
  memset(&b, 0, sizeof(b));
  if (getsockname(s, &b.sa, &blen) != 0) {
    int e = errno;
    close(s);
    return sock_fail(SOCK_ESYS, "getsockname failed: %s", strerror(e));
  }
  *fd = s;
  if (bound) *bound = b;
  return SOCK_OK;
}

int sock_wait(int fd, short events, int64_t deadline, volatile uint32_t* abortFlag) {
  struct pollfd p = {fd, events, 0};
  for (;;) {
    int rc = sock_check_wait(deadline, abortFlag, "wait on socket");
    if (rc != SOCK_OK) return rc;
    int n = poll(&p, 1, sock_poll_slice_ms(deadline));
    if (n > 0) return SOCK_OK; /* errors and hang-ups surface in the next call */
    if (n < 0 && errno != EINTR) return sock_fail(SOCK_ESYS, "poll failed: %s", strerror(errno));
  }
}

static int sock_connect_retryable(int e) {
  return e == ECONNREFUSED || e == ETIMEDOUT || e == EHOSTUNREACH || e == ENETUNREACH || e == ECONNRESET ||
         e == EAGAIN || e == EINTR || e == EADDRNOTAVAIL;
}

/* One attempt: 0 and *out on success, else the errno of the failure. */
static int sock_connect_once(const sock_addr_t* addr, int64_t deadline, volatile uint32_t* abortFlag, int* out,
                             int* status) {
  *status = SOCK_OK;
  int s = socket(addr->sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s < 0) return errno;
  sock_nodelay(s);
  int err = 0;
  if (connect(s, &addr->sa, sock_addr_len(addr)) != 0) {
    err = errno;
    if (err == EINPROGRESS) {
      int rc = sock_wait(s, POLLOUT, deadline, abortFlag);
      if (rc != SOCK_OK) {
        close(s);
        *status = rc;
        return ETIMEDOUT;
      }
      socklen_t elen = sizeof(err);
      if (getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &elen) != 0) err = errno;
    }
  }
  if (err) {
    close(s);
    return err;
  }
  *out = s;
  return 0;
}

int sock_connect(const sock_addr_t* addr, int64_t deadline, volatile uint32_t* abortFlag, int* fd) {
  char text[SOCK_ADDR_STRLEN];
  if (!addr || !sock_addr_valid(addr) || !fd) return sock_fail(SOCK_EINVAL, "connect: bad address");
  sock_addr_to_string(addr, text, sizeof(text), 1);
  int64_t backoffMs = 1;
  int lastErr = 0;
  for (;;) {
    int status, s = -1;
    int err = sock_connect_once(addr, deadline, abortFlag, &s, &status);
    if (err == 0) {
      *fd = s;
      return SOCK_OK;
    }
    if (status == SOCK_EABORT) return sock_fail(SOCK_EABORT, "connect to %s: aborted", text);
    if (status == SOCK_OK) lastErr = err;
    if (status != SOCK_OK || !sock_connect_retryable(err)) {
      if (status == SOCK_ETIMEOUT) break;
      return sock_fail(SOCK_ESYS, "connect to %s failed: %s", text, strerror(err));
    }
    /* Back off; the peer may not be listening yet. */
    int64_t until = sock_time_ns() + backoffMs * 1000000;
    if (deadline != SOCK_NO_DEADLINE && until > deadline) until = deadline;
    while (sock_time_ns() < until) {
      if (abortFlag && __atomic_load_n(abortFlag, __ATOMIC_ACQUIRE))
        return sock_fail(SOCK_EABORT, "connect to %s: aborted", text);
      usleep(1000);
    }
    if (deadline != SOCK_NO_DEADLINE && sock_time_ns() >= deadline) break;
    if (backoffMs < 256) backoffMs *= 2;
  }
  return sock_fail(SOCK_ETIMEOUT, "connect to %s timed out%s%s", text, lastErr ? "; last error: " : "",
                   lastErr ? strerror(lastErr) : "");
}

int sock_accept_try(int listenFd, int* fd, sock_addr_t* peer) {
  sock_addr_t a;
  socklen_t alen = sizeof(a);
  memset(&a, 0, sizeof(a));
  int s = accept4(listenFd, &a.sa, &alen, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (s < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED || errno == EPROTO) {
      *fd = -1;
      return SOCK_OK;
    }
    return sock_fail(SOCK_ESYS, "accept failed: %s", strerror(errno));
  }
  sock_nodelay(s);
  *fd = s;
  if (peer) *peer = a;
  return SOCK_OK;
}

int sock_accept(int listenFd, int64_t deadline, volatile uint32_t* abortFlag, int* fd, sock_addr_t* peer) {
  for (;;) {
    int s = -1;
    int rc = sock_accept_try(listenFd, &s, peer);
    if (rc != SOCK_OK) return rc;
    if (s >= 0) {
      *fd = s;
      return SOCK_OK;
    }
    rc = sock_wait(listenFd, POLLIN, deadline, abortFlag);
    if (rc != SOCK_OK) return sock_fail(rc, "accept: %s", rc == SOCK_EABORT ? "aborted" : "timed out");
  }
}

int sock_send_some(int fd, const void* buf, size_t len, size_t* done) {
  while (*done < len) {
    ssize_t n = send(fd, (const char*)buf + *done, len - *done, MSG_NOSIGNAL);
    if (n > 0) {
      *done += (size_t)n;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return SOCK_OK;
    if (n < 0 && errno == EINTR) continue;
    char text[SOCK_ADDR_STRLEN];
    int e = errno;
    if (e == EPIPE || e == ECONNRESET)
      return sock_fail(SOCK_ECLOSED, "send to %s: peer closed the connection", sock_peer_text(fd, text, sizeof(text)));
    return sock_fail(SOCK_ESYS, "send to %s failed: %s", sock_peer_text(fd, text, sizeof(text)), strerror(e));
  }
  return SOCK_OK;
}

int sock_recv_some(int fd, void* buf, size_t len, size_t* done) {
  while (*done < len) {
    ssize_t n = recv(fd, (char*)buf + *done, len - *done, 0);
    if (n > 0) {
      *done += (size_t)n;
      continue;
    }
    char text[SOCK_ADDR_STRLEN];
    if (n == 0)
      return sock_fail(SOCK_ECLOSED, "recv from %s: peer closed the connection after %zu of %zu bytes",
                       sock_peer_text(fd, text, sizeof(text)), *done, len);
    if (errno == EAGAIN || errno == EWOULDBLOCK) return SOCK_OK;
    if (errno == EINTR) continue;
    int e = errno;
    if (e == ECONNRESET)
      return sock_fail(SOCK_ECLOSED, "recv from %s: connection reset", sock_peer_text(fd, text, sizeof(text)));
    return sock_fail(SOCK_ESYS, "recv from %s failed: %s", sock_peer_text(fd, text, sizeof(text)), strerror(e));
  }
  return SOCK_OK;
}

int sock_sendrecv_all(int sendFd, const void* sbuf, size_t slen, int recvFd, void* rbuf, size_t rlen,
                      int64_t deadline, volatile uint32_t* abortFlag) {
  size_t sdone = 0, rdone = 0;
  for (;;) {
    int rc = sdone < slen ? sock_send_some(sendFd, sbuf, slen, &sdone) : SOCK_OK;
    if (rc != SOCK_OK) return rc;
    rc = rdone < rlen ? sock_recv_some(recvFd, rbuf, rlen, &rdone) : SOCK_OK;
    if (rc != SOCK_OK) return rc;
    if (sdone == slen && rdone == rlen) return SOCK_OK;
    rc = sock_check_wait(deadline, abortFlag, "socket transfer");
    if (rc != SOCK_OK) {
      char text[SOCK_ADDR_STRLEN];
      int fd = sdone < slen ? sendFd : recvFd;
      return sock_fail(rc, "%s %s: %s after %zu of %zu bytes", sdone < slen ? "send to" : "recv from",
                       sock_peer_text(fd, text, sizeof(text)), rc == SOCK_EABORT ? "aborted" : "timed out",
                       sdone < slen ? sdone : rdone, sdone < slen ? slen : rlen);
    }
    struct pollfd p[2];
    int np = 0;
    if (sdone < slen) p[np++] = (struct pollfd){sendFd, POLLOUT, 0};
    if (rdone < rlen) p[np++] = (struct pollfd){recvFd, POLLIN, 0};
    if (poll(p, (nfds_t)np, sock_poll_slice_ms(deadline)) < 0 && errno != EINTR)
      return sock_fail(SOCK_ESYS, "poll failed: %s", strerror(errno));
  }
}

int sock_send_all(int fd, const void* buf, size_t len, int64_t deadline, volatile uint32_t* abortFlag) {
  return sock_sendrecv_all(fd, buf, len, -1, NULL, 0, deadline, abortFlag);
}

int sock_recv_all(int fd, void* buf, size_t len, int64_t deadline, volatile uint32_t* abortFlag) {
  return sock_sendrecv_all(-1, NULL, 0, fd, buf, len, deadline, abortFlag);
}
