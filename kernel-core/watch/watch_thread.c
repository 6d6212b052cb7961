/* The watch thread: one per process while it has a communicator of more
 * than one rank. It sleeps in poll() on every communicator's ring
 * connections and listener, a wake pipe and the status socket; it costs
 * nothing until a neighbour says something or its connection ends. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/err.h"
#include "base/param.h"
#include "comm/comm.h"
#include "proxy/proxy.h"
#include "watch/watch_proto.h"

static pthread_mutex_t watch_life = PTHREAD_MUTEX_INITIALIZER; /* thread start and stop */
static pthread_mutex_t watch_reg = PTHREAD_MUTEX_INITIALIZER;  /* the registry; held while handling events */
static struct ncclComm** watch_comms;
static int watch_n, watch_cap;
static uint64_t watch_gen; /* bumped by every change: polled fds may be stale */
static int watch_stop;
static int watch_running;
static pthread_t watch_tid;
static int watch_wake[2] = {-1, -1};
static int watch_unix = -1;

static void watch_wake_up(void) {
  char b = 1;
  if (watch_wake[1] >= 0 && write(watch_wake[1], &b, 1) < 0 && errno != EAGAIN) MK_WARN("peer watch: wake: %s", strerror(errno));
}

/* A neighbour's message or the end of its connection. */
static void watch_ring_event(struct ncclComm* comm, int side) {
  watch_comm_t* w = &comm->watch;
  int fd = side == 0 ? w->prevFd : w->nextFd;
  int n = comm->nRanks, who = side == 0 ? (comm->rank + n - 1) % n : (comm->rank + 1) % n;
  watch_msg_t msg;
  int rc = sock_recv_all(fd, &msg, sizeof(msg), sock_deadline_ms(200), NULL);
  char name[160];
  if (rc != SOCK_OK) {
    __atomic_store_n(&w->closed[side], 1, __ATOMIC_RELAXED);
    if (__atomic_load_n(&w->leftAt[side], __ATOMIC_RELAXED) != UINT64_MAX) return; /* after its goodbye */
    watch_fail(comm, WATCH_FAIL_DIED, who, fd,
               "%s died: its peer-watch connection to rank %d (host %s) ended without a goodbye (%s): the process "
               "was killed or crashed, or its host or network went down",
               watch_rank_name(comm, who, name, sizeof(name)), comm->rank, comm->peerInfo[comm->rank].hostname,
               rc == SOCK_ECLOSED ? "closed" : sock_error());
    return;
  }
  if (msg.type == WATCH_MSG_FAIL) {
    msg.text[sizeof(msg.text) - 1] = '\0';
    watch_fail_heard(comm, &msg, fd);
    return;
  }
  if (msg.type != WATCH_MSG_BYE || msg.from != who) {
    MK_WARN("Rank %d: peer watch: unexpected message %u from rank %d on the connection of rank %d; ignored",
            comm->rank, msg.type, msg.from, who);
    return;
  }
  __atomic_store_n(&w->leftKind[side], msg.kind == WATCH_FAIL_ABORTED ? WATCH_FAIL_ABORTED : WATCH_FAIL_LEFT,
                   __ATOMIC_RELAXED);
  __atomic_store_n(&w->leftSent[side], msg.sent, __ATOMIC_RELAXED);
  __atomic_store_n(&w->leftAt[side], msg.seq, __ATOMIC_RELEASE);
  /* A collective under way that the leaver never completed cannot end. */
  uint64_t entered = __atomic_load_n(&w->rec.collEntered, __ATOMIC_ACQUIRE);
  uint64_t done = __atomic_load_n(&w->rec.collDone, __ATOMIC_ACQUIRE);
  int under = comm->cudaDev >= 0 ? entered > msg.seq : entered > done && entered > msg.seq;
  if (under) watch_left_fail(comm, side, msg.seq, "is in collective", entered);
  /* Nor can a receive the leaver never matched with a send. */
  uint64_t recvs = __atomic_load_n(&w->rec.recvFrom[side], __ATOMIC_ACQUIRE);
  if (!under && recvs > msg.sent) watch_left_fail(comm, side, msg.seq, "is in receive from it number", recvs);
}

/* A status query on a communicator's listener. */
static void watch_listen_event(struct ncclComm* comm) {
  int fd = -1;
  if (sock_accept_try(comm->watch.listenFd, &fd, NULL) != SOCK_OK || fd < 0) return;
  sock_hello_t hello;
  int rc = sock_recv_all(fd, &hello, sizeof(hello), sock_deadline_ms(200), NULL);
  if (rc == SOCK_OK) rc = sock_hello_check(&hello, comm->magic ^ WATCH_MAGIC_SALT, WATCH_CONN_STATUS, WATCH_PROTO_VERSION);
  if (rc != SOCK_OK) {
    MK_INFO(NCCL_INIT, "Rank %d: peer watch: dropped a connection: %s", comm->rank, sock_error());
    sock_close(&fd);
    return;
  }
  watch_status_serve_tcp(comm, fd);
}

static void* watch_unix_client(void* arg) {
  watch_status_serve_unix((int)(intptr_t)arg);
  return NULL;
}

static void watch_unix_event(void) {
  int fd = accept4(watch_unix, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK); /* sock_* calls expect it */
  if (fd < 0) return;
  /* What a job does is its owner's business: other users (root apart) get nothing. */
  struct ucred cred;
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || (cred.uid != geteuid() && cred.uid != 0)) {
    close(fd);
    return;
  }
  /* Gathering from every rank takes network round trips: not on this thread. */
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&t, &attr, watch_unix_client, (void*)(intptr_t)fd) != 0) close(fd);
  pthread_attr_destroy(&attr);
}

enum { ROLE_WAKE, ROLE_UNIX, ROLE_LISTEN, ROLE_PREV, ROLE_NEXT };
typedef struct {
  struct ncclComm* comm;
  int role;
} watch_slot_t;

static void* watch_main(void* arg) {
  (void)arg;
  prctl(PR_SET_NAME, "mkccl-watch", 0, 0, 0); /* top, ps -L, gdb */
  struct pollfd* fds = NULL;
  watch_slot_t* slots = NULL;
  int cap = 0;
  pthread_mutex_lock(&watch_reg);
  while (!watch_stop) {
    int need = 2 + 3 * watch_n;
    if (need > cap) {
      struct pollfd* f = realloc(fds, sizeof(*fds) * (size_t)need);
      if (f) fds = f;
      watch_slot_t* s = realloc(slots, sizeof(*slots) * (size_t)need);
      if (s) slots = s;
      if (!f || !s) {
        MK_WARN("peer watch: out of memory; dead peers are found by MKCCL_TIMEOUT only");
        break;
      }
      cap = need;
    }
    int k = 0;
    fds[k] = (struct pollfd){watch_wake[0], POLLIN, 0}, slots[k++] = (watch_slot_t){NULL, ROLE_WAKE};
    if (watch_unix >= 0) fds[k] = (struct pollfd){watch_unix, POLLIN, 0}, slots[k++] = (watch_slot_t){NULL, ROLE_UNIX};
    for (int i = 0; i < watch_n; i++) {
      watch_comm_t* w = &watch_comms[i]->watch;
      fds[k] = (struct pollfd){w->listenFd, POLLIN, 0}, slots[k++] = (watch_slot_t){watch_comms[i], ROLE_LISTEN};
      if (w->prevFd >= 0 && !w->closed[0])
        fds[k] = (struct pollfd){w->prevFd, POLLIN, 0}, slots[k++] = (watch_slot_t){watch_comms[i], ROLE_PREV};
      if (w->nextFd >= 0 && !w->closed[1])
        fds[k] = (struct pollfd){w->nextFd, POLLIN, 0}, slots[k++] = (watch_slot_t){watch_comms[i], ROLE_NEXT};
    }
    uint64_t gen = watch_gen;
    pthread_mutex_unlock(&watch_reg);
    int ready = poll(fds, (nfds_t)k, -1);
    pthread_mutex_lock(&watch_reg);
    if (ready < 0 && errno != EINTR) {
      MK_WARN("peer watch: poll failed: %s; dead peers are found by MKCCL_TIMEOUT only", strerror(errno));
      break;
    }
    for (int i = 0; i < k && ready > 0; i++) {
      if (!fds[i].revents) continue;
      if (slots[i].role == ROLE_WAKE) {
        char buf[64];
        while (read(watch_wake[0], buf, sizeof(buf)) > 0) {
        }
        continue;
      }
      if (gen != watch_gen) continue; /* a comm may be gone: poll again on what is there now */
      if (slots[i].role == ROLE_UNIX) watch_unix_event();
      else if (slots[i].role == ROLE_LISTEN) watch_listen_event(slots[i].comm);
      else watch_ring_event(slots[i].comm, slots[i].role == ROLE_PREV ? 0 : 1);
    }
  }
  pthread_mutex_unlock(&watch_reg);
  free(fds);
  free(slots);
  return NULL;
}

/* The status socket: abstract, so nothing is left behind in the file
 * system when the process dies. */
static void watch_unix_open(void) {
  if (!param_MKCCL_WATCH_STATUS()) return;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return;
  struct sockaddr_un sa;
  memset(&sa, 0, sizeof(sa));
  sa.sun_family = AF_UNIX;
  int len = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, WATCH_UNIX_PREFIX "%d", (int)getpid());
  socklen_t slen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len);
  if (bind(fd, (struct sockaddr*)&sa, slen) != 0 || listen(fd, 8) != 0) {
    MK_INFO(NCCL_INIT, "peer watch: no status socket (@%s%d): %s", WATCH_UNIX_PREFIX, (int)getpid(), strerror(errno));
    close(fd);
    return;
  }
  watch_unix = fd;
}

/* A forked child has none of the parent's threads: it must not keep the
 * parent's watch descriptors open either, or a dead parent would not be
 * seen (and its status name would stay bound). The child closes them from
 * this table, kept with atomics and read without a lock: taking the
 * registry lock at fork would order it against the logging locks, which
 * the watch thread takes while it holds the registry (a deadlock). */
#define WATCH_FORK_FDS 4096
static int watch_fork_fds[WATCH_FORK_FDS]; /* fd + 1, 0: free */

static void watch_fork_track(int fd) {
  for (int i = 0; fd >= 0 && i < WATCH_FORK_FDS; i++) {
    int free = 0;
    if (__atomic_compare_exchange_n(&watch_fork_fds[i], &free, fd + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) return;
  }
}

static void watch_fork_untrack(int fd) {
  for (int i = 0; fd >= 0 && i < WATCH_FORK_FDS; i++) {
    int mine = fd + 1;
    if (__atomic_compare_exchange_n(&watch_fork_fds[i], &mine, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) return;
  }
}

static void watch_close_fds(void) {
  for (int i = 0; i < 2; i++)
    if (watch_wake[i] >= 0) watch_fork_untrack(watch_wake[i]), close(watch_wake[i]), watch_wake[i] = -1;
  if (watch_unix >= 0) watch_fork_untrack(watch_unix), close(watch_unix), watch_unix = -1;
}

static void watch_atfork_child(void) {
  for (int i = 0; i < WATCH_FORK_FDS; i++) {
    int v = __atomic_exchange_n(&watch_fork_fds[i], 0, __ATOMIC_ACQ_REL);
    if (v) close(v - 1);
  }
  /* The only thread now: the parent's locks and registry mean nothing here. */
  pthread_mutex_init(&watch_life, NULL);
  pthread_mutex_init(&watch_reg, NULL);
  watch_n = 0;
  watch_running = 0;
  watch_wake[0] = watch_wake[1] = watch_unix = -1;
}
static pthread_once_t watch_atfork_once = PTHREAD_ONCE_INIT;
static void watch_atfork_register(void) { pthread_atfork(NULL, NULL, watch_atfork_child); }

ncclResult_t watch_thread_add(struct ncclComm* comm) {
  pthread_once(&watch_atfork_once, watch_atfork_register);
  ncclResult_t res = ncclSuccess;
  pthread_mutex_lock(&watch_life);
  if (!watch_running) {
    if (pipe2(watch_wake, O_CLOEXEC | O_NONBLOCK) != 0) {
      res = MK_FAIL(ncclSystemError, "Rank %d: peer watch: pipe2 failed: %s", comm->rank, strerror(errno));
      goto out;
    }
    watch_fork_track(watch_wake[0]);
    watch_fork_track(watch_wake[1]);
    watch_unix_open();
    watch_fork_track(watch_unix);
    watch_stop = 0;
    int err = pthread_create(&watch_tid, NULL, watch_main, NULL);
    if (err != 0) {
      watch_close_fds();
      res = MK_FAIL(ncclSystemError, "Rank %d: peer watch: cannot start its thread: %s", comm->rank, strerror(err));
      goto out;
    }
    watch_running = 1;
  }
  pthread_mutex_lock(&watch_reg);
  if (watch_n == watch_cap) {
    int cap = watch_cap ? 2 * watch_cap : 8;
    struct ncclComm** c = realloc(watch_comms, sizeof(*c) * (size_t)cap);
    if (!c) {
      pthread_mutex_unlock(&watch_reg);
      res = MK_FAIL(ncclSystemError, "Rank %d: peer watch: out of memory", comm->rank);
      goto out;
    }
    watch_comms = c, watch_cap = cap;
  }
  watch_comms[watch_n++] = comm;
  watch_gen++;
  watch_fork_track(comm->watch.listenFd);
  watch_fork_track(comm->watch.prevFd);
  watch_fork_track(comm->watch.nextFd);
  pthread_mutex_unlock(&watch_reg);
  watch_wake_up();
out:
  pthread_mutex_unlock(&watch_life);
  return res;
}

void watch_thread_remove(struct ncclComm* comm) {
  pthread_mutex_lock(&watch_life);
  watch_wake_up(); /* the thread leaves poll() and waits for the lock taken below */
  pthread_mutex_lock(&watch_reg);
  for (int i = 0; i < watch_n; i++)
    if (watch_comms[i] == comm) {
      watch_comms[i] = watch_comms[--watch_n];
      watch_fork_untrack(comm->watch.listenFd);
      watch_fork_untrack(comm->watch.prevFd);
      watch_fork_untrack(comm->watch.nextFd);
      break;
    }
  watch_gen++;
  int last = watch_n == 0 && watch_running;
  if (last) watch_stop = 1;
  pthread_mutex_unlock(&watch_reg);
  if (last) {
    watch_wake_up();
    pthread_join(watch_tid, NULL);
    watch_running = 0;
    watch_close_fds();
    free(watch_comms);
    watch_comms = NULL, watch_cap = 0;
  }
  pthread_mutex_unlock(&watch_life);
}

void watch_each_comm(void (*fn)(struct ncclComm* comm, void* arg), void* arg) {
  pthread_mutex_lock(&watch_reg);
  for (int i = 0; i < watch_n; i++) fn(watch_comms[i], arg);
  pthread_mutex_unlock(&watch_reg);
}

/* A process that exits with communicators alive (no ncclCommDestroy, as
 * many programs end) says goodbye for each, so its neighbours fail only
 * the collectives it never joined, not the last ones it completed. Its
 * last calls may have returned with data still queued to its proxy (a
 * send completes once its steps are in the connection's buffers): those
 * leave first, for at most WATCH_EXIT_DRAIN_MS a communicator, while the
 * proxy thread still runs. */
#define WATCH_EXIT_DRAIN_MS 2000
__attribute__((destructor)) static void watch_at_exit(void) {
  pthread_mutex_lock(&watch_reg);
  for (int i = 0; i < watch_n; i++) {
    struct ncclComm* comm = watch_comms[i];
    if (comm->dp.proxyAttached && !proxy_client_drain_for(&comm->dp.proxy, WATCH_EXIT_DRAIN_MS))
      MK_INFO(NCCL_INIT, "Rank %d: at exit, ops still queued to the proxy after %d ms: left", comm->rank,
              WATCH_EXIT_DRAIN_MS);
    watch_say_goodbye(comm);
  }
  pthread_mutex_unlock(&watch_reg);
}
