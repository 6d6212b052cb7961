/* A rank joins: listen, register with its root, learn the next rank, connect
 * the ring, allgather every rank's address. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/param.h"
#include "bootstrap/bootstrap_internal.h"

/* The root's verdict may come a little after our own deadline: wait that
 * much longer for it, it says who is missing. */
#define BOOTSTRAP_ROOT_GRACE_MS 1500

static ncclResult_t bootstrap_connect(bootstrap_state_t* st, const sock_addr_t* addr, uint64_t magic, uint32_t type,
                                      const void* extra, size_t extraLen, int64_t deadline, int* fd,
                                      const char* what) {
  char text[SOCK_ADDR_STRLEN];
  struct {
    sock_hello_t hello;
    bootstrap_root_info_t info;
  } msg;
  memset(&msg, 0, sizeof(msg));
  msg.hello = (sock_hello_t){magic, type, BOOTSTRAP_PROTO_VERSION, (uint64_t)st->rank};
  if (extraLen) memcpy(&msg.info, extra, extraLen);
  int s = -1;
  int rc = sock_connect(addr, deadline, st->abortFlag, &s);
  if (rc == SOCK_OK) rc = sock_send_all(s, &msg, sizeof(sock_hello_t) + extraLen, deadline, st->abortFlag);
  if (rc != SOCK_OK) {
    sock_close(&s);
    return MK_FAIL(bootstrap_result(rc), "bootstrap: rank %d: %s %s: %s", st->rank, what,
                   sock_addr_to_string(addr, text, sizeof(text), 1), bootstrap_sock_error(rc));
  }
  *fd = s;
  return ncclSuccess;
}

ncclResult_t bootstrap_connect_p2p(bootstrap_state_t* st, int peer, int64_t deadline, int* fd) {
  return bootstrap_connect(st, &st->peerAddrs[peer], st->magic, BOOTSTRAP_CONN_P2P, NULL, 0, deadline, fd,
                           "connect to peer at");
}

static ncclResult_t bootstrap_root_verdict(bootstrap_state_t* st, const bootstrap_root_reply_t* r,
                                           const sock_addr_t* rootAddr) {
  char text[SOCK_ADDR_STRLEN], list[128] = "";
  sock_addr_to_string(rootAddr, text, sizeof(text), 1);
  if (r->status == BOOTSTRAP_ROOT_OK) {
    if (!sock_addr_valid(&r->next)) return MK_FAIL(ncclRemoteError, "bootstrap: rank %d: root %s sent a bad address", st->rank, text);
    return ncclSuccess;
  }
  if (r->status == BOOTSTRAP_ROOT_TIMEOUT) {
    size_t used = 0;
    for (int i = 0; i < r->nMissing && i < BOOTSTRAP_MISSING_SHOWN; i++)
      used += (size_t)snprintf(list + used, sizeof(list) - used, " %d", r->missing[i]);
    return MK_FAIL(ncclRemoteError,
                   "bootstrap: rank %d: %d rank(s) did not reach the root at %s within %d s "
                   "(MKCCL_BOOTSTRAP_TIMEOUT); missing:%s%s",
                   st->rank, r->nMissing, text, r->timeoutSec, list, r->nMissing > BOOTSTRAP_MISSING_SHOWN ? " ..." : "");
  }
  return MK_FAIL(ncclInvalidUsage,
                 "bootstrap: rank %d: the root at %s refused the registration: ranks disagree on nranks or on the "
                 "number of unique ids",
                 st->rank, text);
}

/* Register with our root (and, as first of a block, with the previous
 * root), then wait for its answer: the next rank's address. */
static ncclResult_t bootstrap_register(bootstrap_state_t* st, const bootstrap_handle_t* handles, int nHandles,
                                       int64_t deadline, sock_addr_t* next) {
  ncclResult_t res = ncclSuccess;
  int root = bootstrap_root_of_rank(st->rank, st->nRanks, nHandles);
  bootstrap_root_info_t info = {st->rank, st->nRanks, nHandles, root, st->listenAddr};
  int fd = -1, prevFd = -1;
  MK_CHECK(bootstrap_connect(st, &handles[root].addr, handles[root].magic, BOOTSTRAP_CONN_ROOT_REGISTER, &info,
                             sizeof(info), deadline, &fd, "register with root"));
  if (nHandles > 1 && st->rank == bootstrap_root_first_rank(root, st->nRanks, nHandles)) {
    info.root = (root - 1 + nHandles) % nHandles;
    MK_CHECK_GOTO(bootstrap_connect(st, &handles[info.root].addr, handles[info.root].magic,
                                    BOOTSTRAP_CONN_ROOT_NEXT, &info, sizeof(info), deadline, &prevFd,
                                    "register with previous root"),
                  res, out);
    sock_close(&prevFd); /* the data is in flight; the root reads it before our FIN */
  }
  bootstrap_root_reply_t reply;
  int64_t replyDeadline = deadline == SOCK_NO_DEADLINE ? deadline : deadline + BOOTSTRAP_ROOT_GRACE_MS * 1000000LL;
  int rc = sock_recv_all(fd, &reply, sizeof(reply), replyDeadline, st->abortFlag);
  char text[SOCK_ADDR_STRLEN];
  sock_addr_to_string(&handles[root].addr, text, sizeof(text), 1);
  if (rc == SOCK_ETIMEOUT) {
    res = MK_FAIL(ncclRemoteError,
                  "bootstrap: rank %d: no answer from the root at %s within %lld s (MKCCL_BOOTSTRAP_TIMEOUT): not all "
                  "%d ranks arrived",
                  st->rank, text, (long long)(st->timeoutMs / 1000), st->nRanks);
    goto out;
  }
  if (rc != SOCK_OK) {
    res = MK_FAIL(bootstrap_result(rc), "bootstrap: rank %d: waiting for the root at %s: %s", st->rank, text,
                  bootstrap_sock_error(rc));
    goto out;
  }
  MK_CHECK_GOTO(bootstrap_root_verdict(st, &reply, &handles[root].addr), res, out);
  *next = reply.next;
out:
  sock_close(&fd);
  return res;
}

static ncclResult_t bootstrap_state_alloc(int rank, int nRanks, volatile uint32_t* abortFlag, bootstrap_state_t** out) {
  bootstrap_state_t* st = calloc(1, sizeof(*st));
  if (!st) return MK_FAIL(ncclSystemError, "bootstrap: out of memory");
  st->rank = rank;
  st->nRanks = nRanks;
  st->abortFlag = abortFlag;
  st->listenFd = st->ringSendFd = st->ringRecvFd = -1;
  pthread_mutex_init(&st->ringLock, NULL);
  pthread_mutex_init(&st->sendLock, NULL);
  pthread_mutex_init(&st->recvLock, NULL);
  st->peerAddrs = calloc((size_t)nRanks, sizeof(*st->peerAddrs));
  st->sendFds = malloc(sizeof(int) * (size_t)nRanks);
  st->recvFds = malloc(sizeof(int) * (size_t)nRanks);
  if (!st->peerAddrs || !st->sendFds || !st->recvFds) {
    bootstrap_destroy(st);
    return MK_FAIL(ncclSystemError, "bootstrap: out of memory for %d ranks", nRanks);
  }
  for (int i = 0; i < nRanks; i++) st->sendFds[i] = st->recvFds[i] = -1;
  int64_t timeoutSec = param_MKCCL_BOOTSTRAP_TIMEOUT();
  st->timeoutMs = timeoutSec > 0 ? timeoutSec * 1000 : -1;
  st->handshakeMs = param_MKCCL_BOOTSTRAP_HANDSHAKE_TIMEOUT();
  if (st->handshakeMs <= 0) st->handshakeMs = 5000;
  *out = st;
  return ncclSuccess;
}

ncclResult_t bootstrap_init(const bootstrap_handle_t* handles, int nHandles, int rank, int nRanks,
                            volatile uint32_t* abortFlag, bootstrap_state_t** state) {
  ncclResult_t res = ncclSuccess;
  if (nHandles < 1 || nHandles > nRanks || rank < 0 || rank >= nRanks)
    return MK_FAIL(ncclInvalidArgument, "bootstrap: rank %d of %d with %d ids", rank, nRanks, nHandles);
  bootstrap_state_t* st = NULL;
  MK_CHECK(bootstrap_state_alloc(rank, nRanks, abortFlag, &st));
  st->magic = handles[0].magic;
  int64_t deadline = bootstrap_deadline(st);

  sock_iface_t iface;
  MK_CHECK_GOTO(bootstrap_iface_get(&iface), res, fail);
  int rc = sock_listen(&iface.addr, 0, &st->listenFd, &st->listenAddr);
  if (rc != SOCK_OK) {
    res = MK_FAIL(bootstrap_result(rc), "bootstrap: rank %d: %s", rank, sock_error());
    goto fail;
  }
  sock_addr_t next;
  MK_CHECK_GOTO(bootstrap_register(st, handles, nHandles, deadline, &next), res, fail);
  MK_CHECK_GOTO(bootstrap_connect(st, &next, st->magic, BOOTSTRAP_CONN_RING, NULL, 0, deadline, &st->ringSendFd,
                                  "connect the ring to the next rank at"),
                res, fail);
  pthread_mutex_lock(&st->recvLock);
  res = bootstrap_conn_wait(st, &st->ringRecvFd, deadline, "waiting for the previous rank's ring connection");
  pthread_mutex_unlock(&st->recvLock);
  if (res != ncclSuccess) goto fail;

  st->peerAddrs[rank] = st->listenAddr;
  MK_CHECK_GOTO(bootstrap_allgather(st, st->peerAddrs, sizeof(sock_addr_t)), res, fail);
  for (int r = 0; r < nRanks; r++) {
    if (!sock_addr_valid(&st->peerAddrs[r])) {
      res = MK_FAIL(ncclRemoteError, "bootstrap: rank %d: rank %d sent an invalid address", rank, r);
      goto fail;
    }
  }
  char text[SOCK_ADDR_STRLEN];
  MK_INFO(NCCL_INIT | NCCL_BOOTSTRAP, "bootstrap: rank %d/%d ready on %s (%d root%s)", rank, nRanks,
          sock_addr_to_string(&st->listenAddr, text, sizeof(text), 1), nHandles, nHandles > 1 ? "s" : "");
  *state = st;
  return ncclSuccess;
fail:
  bootstrap_destroy(st);
  return res;
}

void bootstrap_destroy(bootstrap_state_t* st) {
  if (!st) return;
  bootstrap_conn_close_pending(st);
  sock_close(&st->listenFd);
  sock_close(&st->ringSendFd);
  sock_close(&st->ringRecvFd);
  for (int i = 0; i < st->nRanks; i++) {
    if (st->sendFds) sock_close(&st->sendFds[i]);
    if (st->recvFds) sock_close(&st->recvFds[i]);
  }
  for (bootstrap_unexpected_t *u = st->unexpected, *next; u; u = next) {
    next = u->next;
    free(u->data);
    free(u);
  }
  free(st->peerAddrs);
  free(st->sendFds);
  free(st->recvFds);
  pthread_mutex_destroy(&st->ringLock);
  pthread_mutex_destroy(&st->sendLock);
  pthread_mutex_destroy(&st->recvLock);
  free(st);
}

int bootstrap_rank(const bootstrap_state_t* st) { return st->rank; }
int bootstrap_nranks(const bootstrap_state_t* st) { return st->nRanks; }
const sock_addr_t* bootstrap_peer_addr(const bootstrap_state_t* st, int rank) {
  return rank >= 0 && rank < st->nRanks ? &st->peerAddrs[rank] : NULL;
}

volatile uint32_t* bootstrap_abort_watch(bootstrap_state_t* state, volatile uint32_t* flag) {
  volatile uint32_t* old = state->abortFlag;
  state->abortFlag = flag;
  return old;
}
