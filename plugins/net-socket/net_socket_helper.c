/* Helper threads (net_socket_helper.h): their start, their body, and the
 * caller's side of their task rings.
 *
 * A helper moves the chunks queued on its data sockets. Non-blocking sends/receives; when nothing
 * has moved for MKCCL_SOCKET_HELPER_SPIN_US it sleeps in poll() on its busy
 * sockets and its eventfd. Until then it polls them itself, yielding: a
 * ring's next step comes within tens of microseconds, and a wake-up from
 * poll() on every step (eventfd, then data) cost about as much. */
#include "net_socket_helper.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "net_socket_chunk.h"
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

static void* net_socket_helper_main(void* arg) {
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
     * `sleeping` is stored before the idle rings are read again (see net_socket_helper_push). */
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

ncclResult_t net_socket_helpers_start(net_socket_comm_t* comm) {
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

/* Queues a chunk on data socket s and wakes its helper; the ring has room by
 * construction (checked). */
static ncclResult_t net_socket_helper_push(net_socket_comm_t* comm, int s, char* data, size_t size,
                                           net_socket_sub_t* sub) {
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

ncclResult_t net_socket_helper_schedule(net_socket_comm_t* comm, net_socket_sub_t* sub, char* data, size_t size,
                                        size_t chunkSize) {
  int n = net_socket_chunk_count(size, chunkSize);
  if (n > comm->nSocks)
    return NS_FAIL(ncclInternalError, "message of %zu bytes in chunks of %zu needs %d sockets, comm has %d", size,
                   chunkSize, n, comm->nSocks);
  atomic_store_explicit(&sub->pending, n, memory_order_relaxed);
  for (int i = 0; i < n; i++) {
    size_t off, len;
    net_socket_chunk_get(size, chunkSize, i, &off, &len);
    NS_CHECK(net_socket_helper_push(comm, (int)(comm->nextSock % (uint32_t)comm->nSocks), data + off, len, sub));
    comm->nextSock++;
  }
  return ncclSuccess;
}
