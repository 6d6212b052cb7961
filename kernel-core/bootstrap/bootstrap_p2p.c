/* Tagged messages between any two ranks over cached connections: one
 * outgoing connection per peer, one incoming per peer. A message read while
 * looking for another (peer, tag) waits in a FIFO list, so order per
 * (peer, tag) is kept. */
#include <stdlib.h>
#include <string.h>

#include "bootstrap/bootstrap_internal.h"

ncclResult_t bootstrap_send(bootstrap_state_t* st, int peer, int tag, const void* data, size_t size) {
  if (peer < 0 || peer >= st->nRanks)
    return MK_FAIL(ncclInvalidArgument, "bootstrap_send: peer %d out of range [0,%d)", peer, st->nRanks);
  if (size > BOOTSTRAP_MSG_MAX || (size && !data))
    return MK_FAIL(ncclInvalidArgument, "bootstrap_send: bad buffer (%zu bytes)", size);
  ncclResult_t res = ncclSuccess;
  int64_t deadline = bootstrap_deadline(st);
  pthread_mutex_lock(&st->sendLock);
  if (st->sendFds[peer] < 0) MK_CHECK_GOTO(bootstrap_connect_p2p(st, peer, deadline, &st->sendFds[peer]), res, out);
  bootstrap_msg_hdr_t hdr = {tag, 0, size};
  int rc = sock_send_all(st->sendFds[peer], &hdr, sizeof(hdr), deadline, st->abortFlag);
  if (rc == SOCK_OK && size) rc = sock_send_all(st->sendFds[peer], data, size, deadline, st->abortFlag);
  if (rc != SOCK_OK) {
    res = MK_FAIL(bootstrap_result(rc), "bootstrap: rank %d: send to rank %d (tag %d, %zu bytes): %s", st->rank, peer,
                  tag, size, bootstrap_sock_error(rc));
    sock_close(&st->sendFds[peer]); /* a half-sent message poisons the stream */
  }
out:
  pthread_mutex_unlock(&st->sendLock);
  return res;
}

static ncclResult_t bootstrap_size_check(bootstrap_state_t* st, int peer, int tag, size_t got, size_t want) {
  if (got == want) return ncclSuccess;
  return MK_FAIL(ncclInternalError, "bootstrap: rank %d: message from rank %d tag %d has %zu bytes, %zu expected",
                 st->rank, peer, tag, got, want);
}

/* A matching message that arrived earlier, taken out of the list. */
static bootstrap_unexpected_t* bootstrap_unexpected_take(bootstrap_state_t* st, int peer, int tag) {
  for (bootstrap_unexpected_t** pp = &st->unexpected; *pp; pp = &(*pp)->next) {
    if ((*pp)->peer == peer && (*pp)->tag == tag) {
      bootstrap_unexpected_t* u = *pp;
      *pp = u->next;
      return u;
    }
  }
  return NULL;
}

static ncclResult_t bootstrap_unexpected_read(bootstrap_state_t* st, int peer, const bootstrap_msg_hdr_t* hdr,
                                              int64_t deadline) {
  bootstrap_unexpected_t* u = calloc(1, sizeof(*u));
  void* data = hdr->size ? malloc(hdr->size) : NULL;
  if (!u || (hdr->size && !data)) {
    free(u);
    free(data);
    return MK_FAIL(ncclSystemError, "bootstrap: out of memory for a %llu-byte message", (unsigned long long)hdr->size);
  }
  int rc = hdr->size ? sock_recv_all(st->recvFds[peer], data, hdr->size, deadline, st->abortFlag) : SOCK_OK;
  if (rc != SOCK_OK) {
    free(u);
    free(data);
    return MK_FAIL(bootstrap_result(rc), "bootstrap: rank %d: recv from rank %d: %s", st->rank, peer,
                     bootstrap_sock_error(rc));
  }
  *u = (bootstrap_unexpected_t){NULL, peer, hdr->tag, hdr->size, data};
  bootstrap_unexpected_t** tail = &st->unexpected;
  while (*tail) tail = &(*tail)->next;
  *tail = u;
  return ncclSuccess;
}

static ncclResult_t bootstrap_recv_locked(bootstrap_state_t* st, int peer, int tag, void* data, size_t size) {
  bootstrap_unexpected_t* u = bootstrap_unexpected_take(st, peer, tag);
  if (u) {
    ncclResult_t res = bootstrap_size_check(st, peer, tag, u->size, size);
    if (res == ncclSuccess && size) memcpy(data, u->data, size);
    free(u->data);
    free(u);
    return res;
  }
  int64_t deadline = bootstrap_deadline(st);
  MK_CHECK(bootstrap_conn_wait(st, &st->recvFds[peer], deadline, "waiting for a peer's connection"));
  for (;;) {
    bootstrap_msg_hdr_t hdr;
    int rc = sock_recv_all(st->recvFds[peer], &hdr, sizeof(hdr), deadline, st->abortFlag);
    if (rc != SOCK_OK)
      return MK_FAIL(bootstrap_result(rc), "bootstrap: rank %d: recv from rank %d (tag %d): %s", st->rank, peer, tag,
                     bootstrap_sock_error(rc));
    if (hdr.size > BOOTSTRAP_MSG_MAX)
      return MK_FAIL(ncclRemoteError, "bootstrap: rank %d: rank %d announced a %llu-byte message", st->rank, peer,
                     (unsigned long long)hdr.size);
    if (hdr.tag != tag) {
      MK_CHECK(bootstrap_unexpected_read(st, peer, &hdr, deadline));
      continue;
    }
    if (hdr.size != size) {
      /* Keep the stream in step: take the payload off it, then refuse. */
      MK_CHECK(bootstrap_unexpected_read(st, peer, &hdr, deadline));
      bootstrap_unexpected_t* u = bootstrap_unexpected_take(st, peer, tag);
      free(u->data);
      free(u);
      return bootstrap_size_check(st, peer, tag, hdr.size, size);
    }
    rc = size ? sock_recv_all(st->recvFds[peer], data, size, deadline, st->abortFlag) : SOCK_OK;
    if (rc != SOCK_OK)
      return MK_FAIL(bootstrap_result(rc), "bootstrap: rank %d: recv from rank %d (tag %d): %s", st->rank, peer, tag,
                     bootstrap_sock_error(rc));
    return ncclSuccess;
  }
}

ncclResult_t bootstrap_recv(bootstrap_state_t* st, int peer, int tag, void* data, size_t size) {
  if (peer < 0 || peer >= st->nRanks)
    return MK_FAIL(ncclInvalidArgument, "bootstrap_recv: peer %d out of range [0,%d)", peer, st->nRanks);
  if (size && !data) return MK_FAIL(ncclInvalidArgument, "bootstrap_recv: NULL buffer");
  pthread_mutex_lock(&st->recvLock);
  ncclResult_t res = bootstrap_recv_locked(st, peer, tag, data, size);
  pthread_mutex_unlock(&st->recvLock);
  return res;
}
