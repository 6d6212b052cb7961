/* A rank's listen socket: accepts connections, reads their hello without
 * blocking on any one of them, and files each as the ring connection from
 * the previous rank or the P2P connection of the rank it names. Anything
 * else (wrong magic, wrong type, a rank out of range, silence past the
 * handshake timeout, a second connection for the same slot) is dropped
 * with a WARN naming the peer. */
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "bootstrap/bootstrap_internal.h"

static void bootstrap_conn_drop(bootstrap_state_t* st, int i, const char* why) {
  char text[SOCK_ADDR_STRLEN];
  MK_WARN("bootstrap: rank %d: dropped connection from %s: %s", st->rank,
          sock_addr_to_string(&st->pending[i].addr, text, sizeof(text), 1), why);
  sock_close(&st->pending[i].fd);
  st->pending[i] = st->pending[--st->nPending];
}

static void bootstrap_conn_identify(bootstrap_state_t* st, int i) {
  bootstrap_pending_t* p = &st->pending[i];
  const sock_hello_t* h = &p->hello;
  uint32_t type = h->type == BOOTSTRAP_CONN_RING ? BOOTSTRAP_CONN_RING : BOOTSTRAP_CONN_P2P;
  if (sock_hello_check(h, st->magic, type, BOOTSTRAP_PROTO_VERSION) != SOCK_OK) {
    bootstrap_conn_drop(st, i, sock_error());
    return;
  }
  char why[96];
  if (h->arg >= (uint64_t)st->nRanks) {
    snprintf(why, sizeof(why), "claims rank %llu of %d", (unsigned long long)h->arg, st->nRanks);
    bootstrap_conn_drop(st, i, why);
    return;
  }
  int peer = (int)h->arg;
  int* slot = NULL;
  if (type == BOOTSTRAP_CONN_P2P) slot = &st->recvFds[peer];
  else if (peer == (st->rank - 1 + st->nRanks) % st->nRanks) slot = &st->ringRecvFd;
  if (!slot || *slot >= 0) {
    snprintf(why, sizeof(why), "unexpected %s connection from rank %d", type == BOOTSTRAP_CONN_RING ? "ring" : "p2p",
             peer);
    bootstrap_conn_drop(st, i, why);
    return;
  }
  *slot = p->fd;
  st->pending[i] = st->pending[--st->nPending];
}

static void bootstrap_conn_accept(bootstrap_state_t* st) {
  for (;;) {
    int fd = -1;
    sock_addr_t peer;
    /* Full: the rest wait in the listen backlog until hellos free slots (a
     * rank of a large communicator is called by all the others at once). */
    if (st->nPending == BOOTSTRAP_PENDING_MAX) return;
    if (sock_accept_try(st->listenFd, &fd, &peer) != SOCK_OK || fd < 0) return;
    bootstrap_pending_t* p = &st->pending[st->nPending++];
    memset(p, 0, sizeof(*p));
    p->fd = fd;
    p->addr = peer;
    p->deadline = sock_deadline_ms(st->handshakeMs);
  }
}

void bootstrap_conn_poll(bootstrap_state_t* st, int pollMs) {
  int64_t now = sock_time_ns();
  for (int i = st->nPending - 1; i >= 0; i--)
    if (now >= st->pending[i].deadline) bootstrap_conn_drop(st, i, "no hello within the handshake timeout");
  struct pollfd fds[BOOTSTRAP_PENDING_MAX + 1];
  int n = 0;
  fds[n++] = (struct pollfd){st->nPending < BOOTSTRAP_PENDING_MAX ? st->listenFd : -1, POLLIN, 0};
  for (int i = 0; i < st->nPending; i++) fds[n++] = (struct pollfd){st->pending[i].fd, POLLIN, 0};
  if (poll(fds, (nfds_t)n, pollMs) <= 0) return;
  for (int i = n - 1; i >= 1; i--) {
    if (!fds[i].revents) continue;
    bootstrap_pending_t* p = &st->pending[i - 1];
    if (sock_recv_some(p->fd, &p->hello, sizeof(p->hello), &p->got) != SOCK_OK) {
      bootstrap_conn_drop(st, i - 1, sock_error());
    } else if (p->got == sizeof(p->hello)) {
      bootstrap_conn_identify(st, i - 1);
    }
  }
  if (fds[0].revents) bootstrap_conn_accept(st);
}

ncclResult_t bootstrap_conn_wait(bootstrap_state_t* st, int* slot, int64_t deadline, const char* what) {
  while (*slot < 0) {
    if (st->abortFlag && __atomic_load_n(st->abortFlag, __ATOMIC_ACQUIRE))
      return MK_FAIL(ncclInternalError, "bootstrap: rank %d: %s: aborted", st->rank, what);
    int64_t left = deadline == SOCK_NO_DEADLINE ? 10 : (deadline - sock_time_ns()) / 1000000;
    if (left <= 0)
      return MK_FAIL(ncclRemoteError, "bootstrap: rank %d: %s: timed out after %lld s (MKCCL_BOOTSTRAP_TIMEOUT)",
                     st->rank, what, (long long)(st->timeoutMs / 1000));
    bootstrap_conn_poll(st, left < 10 ? (int)left : 10);
  }
  return ncclSuccess;
}

void bootstrap_conn_close_pending(bootstrap_state_t* st) {
  for (int i = 0; i < st->nPending; i++) sock_close(&st->pending[i].fd);
  st->nPending = 0;
}
