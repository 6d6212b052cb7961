/* Helper thread: moves the chunks queued on its data sockets (socket s
 * belongs to helper s % nThreads). Non-blocking sends/receives; when nothing
 * has moved for MKCCL_SOCKET_HELPER_SPIN_US it sleeps in poll() on its busy
 * sockets and its eventfd. Until then it polls them itself, yielding: a
 * ring's next step comes within tens of microseconds, and a wake-up from
 * poll() on every step (eventfd, then data) cost about as much. */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "net_socket_comm.h"
#include "net_socket_log.h"
#include "sock/sock.h"

enum { NET_SOCKET_IDLE = 0, NET_SOCKET_BUSY = 1, NET_SOCKET_BLOCKED = 2, NET_SOCKET_FAILED = 3 };

/* Moves tasks of one socket until it would block or its ring is empty. */
static int net_socket_helper_socket(net_socket_comm_t* comm, net_socket_data_t* d, int* moved) {
  uint32_t head = atomic_load_explicit(&d->head, memory_order_relaxed);
  while (head != atomic_load_explicit(&d->tail, memory_order_acquire)) {
    net_socket_task_t* t = &d->ring[head % NET_SOCKET_RING];
    size_t before = d->offset;
    int rc = comm->isSend ? sock_send_some(d->fd, t->data, t->size, &d->offset)
                          : sock_recv_some(d->fd, t->data, t->size, &d->offset);
    if (rc != SOCK_OK) {
      /* Log only the first failure: once the comm is dead, every socket fails. */
      if (atomic_load(&comm->error) == ncclSuccess) NS_WARN("data socket: %s", sock_error());
      net_socket_comm_fail(comm, rc == SOCK_ECLOSED ? ncclRemoteError : ncclSystemError);
      return NET_SOCKET_FAILED;
    }
    if (d->offset != before) *moved = 1;
    if (d->offset < t->size) return NET_SOCKET_BLOCKED;
    d->offset = 0;
    atomic_fetch_sub_explicit(&t->sub->pending, 1, memory_order_release);
    atomic_store_explicit(&d->head, ++head, memory_order_release);
  }
  return NET_SOCKET_IDLE;
}

static int64_t net_socket_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

void* net_socket_helper_main(void* arg) {
  net_socket_helper_t* h = arg;
  net_socket_comm_t* comm = h->comm;
  char name[16];
  snprintf(name, sizeof(name), "mkccl-sock%c%d", comm->isSend ? 's' : 'r', h->index); /* top, ps -L, gdb */
  prctl(PR_SET_NAME, name, 0, 0, 0);
  struct pollfd pfd[NET_SOCKET_MAX_SOCKS + 1];
  int state[NET_SOCKET_MAX_SOCKS];
  int failed = 0;
  int64_t lastMove = net_socket_now_ns();
  while (!atomic_load(&h->stop)) {
    int moved = 0, np = 0;
    for (int s = h->index; s < comm->nSocks && !failed; s += comm->nThreads) {
      state[s] = net_socket_helper_socket(comm, &comm->data[s], &moved);
      if (state[s] == NET_SOCKET_FAILED) failed = 1;
      if (state[s] == NET_SOCKET_BLOCKED)
        pfd[np++] = (struct pollfd){comm->data[s].fd, comm->isSend ? POLLOUT : POLLIN, 0};
    }
    if (moved) {
      if (comm->helperSpinNs > 0) lastMove = net_socket_now_ns();
      continue;
    }
    if (!failed && comm->helperSpinNs > 0 && net_socket_now_ns() - lastMove < comm->helperSpinNs) {
      sched_yield();
      continue;
    }
    if (failed) np = 0; /* a dead comm only waits for stop */
    /* Nothing moved: sleep until a blocked socket is ready or a task arrives.
     * `sleeping` is stored before the idle rings are read again (see _push). */
    atomic_store(&h->sleeping, 1);
    int fresh = 0;
    for (int s = h->index; s < comm->nSocks && !failed; s += comm->nThreads)
      if (state[s] == NET_SOCKET_IDLE &&
          atomic_load(&comm->data[s].tail) != atomic_load_explicit(&comm->data[s].head, memory_order_relaxed))
        fresh = 1;
    if (!fresh && !atomic_load(&h->stop)) {
      pfd[np++] = (struct pollfd){h->efd, POLLIN, 0};
      if (poll(pfd, (nfds_t)np, -1) > 0 && (pfd[np - 1].revents & POLLIN)) {
        uint64_t v;
        ssize_t n = read(h->efd, &v, sizeof(v));
        (void)n;
      }
    }
    atomic_store(&h->sleeping, 0);
    if (comm->helperSpinNs > 0) lastMove = net_socket_now_ns(); /* woken: the next task is near */
  }
  return NULL;
}
