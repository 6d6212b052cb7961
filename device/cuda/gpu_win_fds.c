/* Passing VMM export descriptors between the LSA peers of one host: Unix
 * datagram sockets in the abstract namespace (nothing left on disk by a
 * crash), named by the communicator, the window and the world rank. The
 * names exist on one host and in one network namespace, which is where
 * LSA peers are. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "base/param.h"
#include "comm/comm.h"
#include "device/cuda/gpu_win.h"

typedef struct {
  int32_t lsaRank;
  uint32_t seq;
} gpu_win_fd_msg_t;

static socklen_t gpu_win_fds_name(const struct ncclComm* comm, uint64_t seq, int rank, struct sockaddr_un* a) {
  memset(a, 0, sizeof(*a));
  a->sun_family = AF_UNIX;
  int n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "mkccl-win-%016llx-%llu-%d",
                   (unsigned long long)(comm->commHash ^ comm->magic), (unsigned long long)seq, rank);
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

ncclResult_t gpu_win_fds_open(struct ncclComm* comm, uint64_t seq, int* sock) {
  int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (s < 0) return MK_FAIL(ncclSystemError, "window: socket(AF_UNIX) failed: %s", strerror(errno));
  struct sockaddr_un a;
  socklen_t len = gpu_win_fds_name(comm, seq, comm->rank, &a);
  if (bind(s, (struct sockaddr*)&a, len) != 0) {
    int e = errno;
    close(s);
    return MK_FAIL(ncclSystemError, "window: binding @%s failed: %s", a.sun_path + 1, strerror(e));
  }
  *sock = s;
  return ncclSuccess;
}

/* 0: sent; EAGAIN: the peer's queue is full, try again later. */
static int gpu_win_fds_send(const struct ncclComm* comm, int s, uint64_t seq, int peerWorld, int lsaRank, int fd) {
  struct sockaddr_un a;
  socklen_t len = gpu_win_fds_name(comm, seq, peerWorld, &a);
  gpu_win_fd_msg_t m = {lsaRank, (uint32_t)seq};
  struct iovec iov = {&m, sizeof(m)};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } ctl;
  memset(&ctl, 0, sizeof(ctl));
  struct msghdr h = {.msg_name = &a, .msg_namelen = len, .msg_iov = &iov, .msg_iovlen = 1,
                     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf)};
  struct cmsghdr* c = CMSG_FIRSTHDR(&h);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof(int));
  if (sendmsg(s, &h, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)sizeof(m)) return 0;
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS ? EAGAIN : errno;
}

/* One message if any: 1 with its sender and descriptor, 0 when none waits. */
static int gpu_win_fds_recv(int s, gpu_win_fd_msg_t* m, int* fd) {
  struct iovec iov = {m, sizeof(*m)};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } ctl;
  struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf)};
  ssize_t n = recvmsg(s, &h, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
  struct cmsghdr* c = CMSG_FIRSTHDR(&h);
  *fd = -1;
  if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) memcpy(fd, CMSG_DATA(c), sizeof(int));
  return n == (ssize_t)sizeof(*m) ? 1 : -1;
}

static double gpu_win_fds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static ncclResult_t gpu_win_fds_loop(struct ncclComm* comm, int s, uint64_t seq, int lsaRank, int lsaSize, int myFd,
                                     int* fds) {
  int first = comm->rank - lsaRank;
  int64_t timeout = param_MKCCL_TIMEOUT();
  double deadline = timeout > 0 ? gpu_win_fds_now() + (double)timeout : 0;
  int next = 0, got = 1; /* next peer to send to; descriptors held (ours) */
  while (next < lsaSize || got < lsaSize) {
    while (next < lsaSize) {
      if (next == lsaRank) {
        next++;
        continue;
      }
      int e = gpu_win_fds_send(comm, s, seq, first + next, lsaRank, myFd);
      if (e == EAGAIN) break;
      if (e != 0)
        return MK_FAIL(ncclSystemError, "window: sending the memory handle to rank %d failed: %s", first + next,
                       strerror(e));
      next++;
    }
    gpu_win_fd_msg_t m;
    int fd, r;
    while ((r = gpu_win_fds_recv(s, &m, &fd)) == 1) {
      if (m.lsaRank < 0 || m.lsaRank >= lsaSize || m.lsaRank == lsaRank || fds[m.lsaRank] >= 0 || fd < 0 ||
          m.seq != (uint32_t)seq) {
        if (fd >= 0) close(fd);
        return MK_FAIL(ncclInternalError, "window: an unexpected memory handle message (LSA rank %d)", m.lsaRank);
      }
      fds[m.lsaRank] = fd;
      got++;
    }
    if (r < 0) return MK_FAIL(ncclSystemError, "window: receiving memory handles failed: %s", strerror(errno));
    if (next == lsaSize && got == lsaSize) break;
    if (__atomic_load_n(comm->abortFlag, __ATOMIC_ACQUIRE))
      return MK_FAIL(ncclRemoteError, "window: aborted while exchanging memory handles");
    if (deadline > 0 && gpu_win_fds_now() > deadline)
      return MK_FAIL(ncclRemoteError, "window: rank %d got %d of %d memory handles within MKCCL_TIMEOUT (%lld s)",
                     comm->rank, got, lsaSize, (long long)timeout);
    struct pollfd p = {s, POLLIN, 0};
    (void)poll(&p, 1, 10);
  }
  return ncclSuccess;
}

ncclResult_t gpu_win_fds_swap(struct ncclComm* comm, int sock, uint64_t seq, int lsaRank, int lsaSize, int myFd,
                              int* fds) {
  for (int i = 0; i < lsaSize; i++) fds[i] = -1;
  fds[lsaRank] = myFd;
  ncclResult_t res = gpu_win_fds_loop(comm, sock, seq, lsaRank, lsaSize, myFd, fds);
  close(sock);
  if (res != ncclSuccess)
    for (int i = 0; i < lsaSize; i++)
      if (i != lsaRank && fds[i] >= 0) close(fds[i]), fds[i] = -1;
  return res;
}
