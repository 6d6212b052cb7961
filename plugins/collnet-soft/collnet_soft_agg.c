/* The forked aggregator (collnet_soft_agg.h). */
#include "collnet_soft_agg.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collnet_soft_log.h"
#include "collnet_soft_reduce.h"
#include "collnet_soft_wire.h"

/* Exit codes of the child, for collnet_soft_agg_stop's callers' logs. */
enum { AGG_DONE = 0, AGG_EIO = 2, AGG_EHELLO = 3, AGG_ETIMEOUT = 4, AGG_EMISMATCH = 5, AGG_ENOMEM = 6 };

static int64_t agg_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 0 when all of it came, 1 on a clean end of stream before any byte, -1 otherwise. */
static int agg_read(int fd, void* buf, size_t len) {
  size_t got = 0;
  while (got < len) {
    ssize_t n = read(fd, (char*)buf + got, len - got);
    if (n > 0) got += (size_t)n;
    else if (n == 0) return got == 0 ? 1 : -1;
    else if (errno != EINTR) return -1;
  }
  return 0;
}

static int agg_write(int fd, const void* buf, size_t len) {
  size_t put = 0;
  while (put < len) {
    ssize_t n = send(fd, (const char*)buf + put, len - put, MSG_NOSIGNAL);
    if (n > 0) put += (size_t)n;
    else if (n < 0 && errno != EINTR) return -1;
  }
  return 0;
}

static void agg_close_others(int keep) {
  /* Inherited sockets kept open here would hide the parent's death from its peers. */
#ifdef SYS_close_range
  if ((keep <= 3 || syscall(SYS_close_range, 3u, (unsigned)keep - 1, 0u) == 0) &&
      syscall(SYS_close_range, (unsigned)keep + 1, ~0u, 0u) == 0)
    return;
#endif
  struct rlimit rl;
  int max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (int)rl.rlim_cur : 65536;
  for (int fd = 3; fd < max; fd++)
    if (fd != keep) close(fd);
}

static int agg_blocking(int fd) {
  int fl = fcntl(fd, F_GETFL);
  return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
}

/* Accepts until every rank said hello; fds[rank] gets its connection. */
static int agg_accept(int listenFd, int nranks, int64_t timeoutMs, int* fds) {
  int64_t deadline = agg_now_ms() + timeoutMs;
  for (int have = 0; have < nranks;) {
    int64_t left = deadline - agg_now_ms();
    if (left <= 0) return AGG_ETIMEOUT;
    struct pollfd p = {listenFd, POLLIN, 0};
    int r = poll(&p, 1, left > 100 ? 100 : (int)left);
    if (r < 0 && errno != EINTR) return AGG_EIO;
    if (r <= 0) continue;
    int fd = accept(listenFd, NULL, NULL);
    if (fd < 0) continue;
    /* A result goes out as a header and its data: with Nagle the data
     * would wait for the rank's delayed ack of the header (40 ms). */
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    sock_hello_t h;
    if (agg_blocking(fd) != 0 || agg_read(fd, &h, sizeof(h)) != 0 || h.magic != COLLNET_SOFT_MAGIC ||
        h.type != COLLNET_SOFT_HELLO_TYPE || h.version != COLLNET_SOFT_VERSION) {
      close(fd); /* not one of ours: keep waiting for the ranks */
      continue;
    }
    int rank = (int)(uint32_t)h.arg, n = (int)(uint32_t)(h.arg >> 32);
    if (n != nranks || rank < 0 || rank >= nranks || fds[rank] >= 0) return AGG_EHELLO;
    fds[rank] = fd;
    have++;
  }
  return AGG_DONE;
}

static int agg_same(const collnet_soft_op_t* a, const collnet_soft_op_t* b) {
  return a->magic == b->magic && a->seq == b->seq && a->count == b->count && a->bytes == b->bytes &&
         a->dataType == b->dataType && a->redOp == b->redOp;
}

/* One iallreduce: every rank's header, then the data chunk by chunk. */
static int agg_op(const int* fds, int nranks, uint64_t seq, char* acc, char* tmp, size_t chunk) {
  collnet_soft_op_t op0, op;
  int r = agg_read(fds[0], &op0, sizeof(op0));
  if (r == 1) return -1; /* rank 0 closed: the collective is over */
  if (r != 0) return AGG_EIO;
  int ok = op0.magic == COLLNET_SOFT_MAGIC && op0.seq == seq &&
           collnet_soft_supported((ncclDataType_t)op0.dataType, (ncclRedOp_t)op0.redOp) &&
           op0.bytes == op0.count * collnet_soft_type_size((ncclDataType_t)op0.dataType);
  for (int i = 1; i < nranks; i++) {
    if (agg_read(fds[i], &op, sizeof(op)) != 0) return AGG_EIO;
    ok = ok && agg_same(&op0, &op);
  }
  collnet_soft_result_t res = {COLLNET_SOFT_MAGIC, seq, ok ? op0.bytes : 0,
                               ok ? COLLNET_SOFT_OK : COLLNET_SOFT_MISMATCH, 0};
  for (int i = 0; i < nranks; i++)
    if (agg_write(fds[i], &res, sizeof(res)) != 0) return AGG_EIO;
  if (!ok) return AGG_EMISMATCH;
  size_t esize = collnet_soft_type_size((ncclDataType_t)op0.dataType);
  chunk -= chunk % esize; /* whole elements per step */
  for (uint64_t off = 0; off < op0.bytes; off += chunk) {
    size_t n = op0.bytes - off < chunk ? (size_t)(op0.bytes - off) : chunk;
    if (agg_read(fds[0], acc, n) != 0) return AGG_EIO;
    for (int i = 1; i < nranks; i++) {
      if (agg_read(fds[i], tmp, n) != 0) return AGG_EIO;
      collnet_soft_reduce(acc, tmp, n / esize, (ncclDataType_t)op0.dataType, (ncclRedOp_t)op0.redOp);
    }
    for (int i = 0; i < nranks; i++)
      if (agg_write(fds[i], acc, n) != 0) return AGG_EIO;
  }
  return AGG_DONE;
}

static void agg_main(pid_t parent, int listenFd, int nranks, int64_t timeoutMs, size_t chunk) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(AGG_EIO); /* the parent died before the line above */
  agg_close_others(listenFd);
  int fds[COLLNET_SOFT_MAX_RANKS];
  for (int i = 0; i < nranks; i++) fds[i] = -1;
  int rc = agg_accept(listenFd, nranks, timeoutMs, fds);
  if (rc != AGG_DONE) _exit(rc);
  close(listenFd);
  char* acc = mmap(NULL, 2 * chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (acc == MAP_FAILED) _exit(AGG_ENOMEM);
  for (uint64_t seq = 0;; seq++) {
    rc = agg_op(fds, nranks, seq, acc, acc + chunk, chunk);
    if (rc < 0) _exit(AGG_DONE);
    if (rc != AGG_DONE) _exit(rc);
  }
}

ncclResult_t collnet_soft_agg_start(int listenFd, int nranks, int64_t timeoutMs, size_t chunk, pid_t* pid) {
  if (nranks < 1 || nranks > COLLNET_SOFT_MAX_RANKS)
    return CS_FAIL(ncclInvalidArgument, "connect: %d ranks (1 to %d)", nranks, COLLNET_SOFT_MAX_RANKS);
  if (chunk < 8) chunk = 8;
  pid_t parent = getpid();
  pid_t child = fork();
  if (child < 0) return CS_FAIL(ncclSystemError, "connect: fork of the aggregator failed: %s", strerror(errno));
  if (child == 0) agg_main(parent, listenFd, nranks, timeoutMs, chunk);
  CS_INFO("aggregator of %d ranks started (pid %d)", nranks, (int)child);
  *pid = child;
  return ncclSuccess;
}

int collnet_soft_agg_stop(pid_t pid, int waitMs) {
  int status = 0;
  for (int waited = 0; waited <= waitMs; waited += 10) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
    if (r < 0) return -1;
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}
