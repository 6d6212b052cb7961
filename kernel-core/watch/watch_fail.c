/* A failure the watch decides: recorded once, made the communicator's
 * error, its abort flag raised, passed on around the ring; and the checks
 * the calling thread makes before it queues an operation. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/err.h"
#include "comm/comm.h"
#include "watch/watch_proto.h"

const char* watch_rank_name(const struct ncclComm* comm, int rank, char* buf, size_t len) {
  if (comm->peerInfo && rank >= 0 && rank < comm->nRanks)
    snprintf(buf, len, "rank %d (host %s, pid %d)", rank, comm->peerInfo[rank].hostname, (int)comm->peerInfo[rank].pid);
  else
    snprintf(buf, len, "rank %d", rank);
  return buf;
}

int watch_msg_send(int fd, const watch_msg_t* msg) {
  /* A neighbour that no longer reads is dead or leaving: do not wait on it. */
  return sock_send_all(fd, msg, sizeof(*msg), sock_deadline_ms(200), NULL);
}

void watch_msg_forward(struct ncclComm* comm, const watch_msg_t* msg, int fromFd) {
  watch_comm_t* w = &comm->watch;
  if (w->prevFd >= 0 && w->prevFd != fromFd && __atomic_load_n(&w->leftAt[0], __ATOMIC_RELAXED) == UINT64_MAX) watch_msg_send(w->prevFd, msg);
  if (w->nextFd >= 0 && w->nextFd != fromFd && __atomic_load_n(&w->leftAt[1], __ATOMIC_RELAXED) == UINT64_MAX) watch_msg_send(w->nextFd, msg);
}

static int watch_fail_v(struct ncclComm* comm, int kind, int rank, uint64_t seq, int fromFd, const char* fmt, va_list ap) {
  watch_comm_t* w = &comm->watch;
  pthread_mutex_lock(&w->lock);
  if (w->failKind != WATCH_FAIL_NONE) {
    pthread_mutex_unlock(&w->lock);
    return 0;
  }
  vsnprintf(w->failText, sizeof(w->failText), fmt, ap);
  w->failRank = rank;
  /* The text (the last error), then the error, then the flag: whoever sees
   * one finds what came before it. */
  MK_WARN("Rank %d: communicator failed: %s", comm->rank, w->failText);
  __atomic_store_n(&w->failKind, kind, __ATOMIC_RELEASE);
  comm_async_error_set(comm, ncclRemoteError);
  __atomic_store_n(comm->abortFlag, 1, __ATOMIC_RELEASE);
  watch_msg_t msg;
  memset(&msg, 0, sizeof(msg));
  msg.type = WATCH_MSG_FAIL;
  msg.from = comm->rank;
  msg.kind = kind;
  msg.subject = rank;
  msg.seq = seq;
  snprintf(msg.text, sizeof(msg.text), "%s", w->failText);
  watch_msg_forward(comm, &msg, fromFd);
  pthread_mutex_unlock(&w->lock);
  return 1;
}

int watch_fail(struct ncclComm* comm, int kind, int rank, int fromFd, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int first = watch_fail_v(comm, kind, rank, UINT64_MAX, fromFd, fmt, ap);
  va_end(ap);
  return first;
}

int watch_fail_seq(struct ncclComm* comm, int kind, int rank, uint64_t seq, int fromFd, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int first = watch_fail_v(comm, kind, rank, seq, fromFd, fmt, ap);
  va_end(ap);
  return first;
}

int watch_failure(struct ncclComm* comm, char* text, size_t len) {
  watch_comm_t* w = &comm->watch;
  int kind = __atomic_load_n(&w->failKind, __ATOMIC_ACQUIRE);
  if (kind == WATCH_FAIL_NONE || !text || !len) return kind;
  pthread_mutex_lock(&w->lock);
  snprintf(text, len, "%s", w->failText);
  pthread_mutex_unlock(&w->lock);
  return kind;
}

int watch_failure_wait(struct ncclComm* comm, char* text, size_t len, int ms) {
  int kind = watch_failure(comm, text, len);
  for (int i = 0; kind == WATCH_FAIL_NONE && comm->watch.registered && i < ms; i++) {
    usleep(1000);
    kind = watch_failure(comm, text, len);
  }
  return kind;
}

void watch_ops_done(struct ncclComm* comm) {
  watch_rec_t* r = &comm->watch.rec;
  __atomic_store_n(&r->collDone, __atomic_load_n(&r->collEntered, __ATOMIC_RELAXED), __ATOMIC_RELEASE);
}

static int watch_side_rank(const struct ncclComm* comm, int side) {
  int n = comm->nRanks;
  return side == 0 ? (comm->rank + n - 1) % n : (comm->rank + 1) % n;
}

void watch_left_fail(struct ncclComm* comm, int side, uint64_t left, const char* doing, uint64_t c) {
  watch_comm_t* w = &comm->watch;
  int who = watch_side_rank(comm, side);
  int kind = __atomic_load_n(&w->leftKind[side], __ATOMIC_RELAXED);
  char name[160];
  watch_fail_seq(comm, kind, who, left, -1,
             "%s %s after %llu collective(s) and %llu send(s) to rank %d, while rank %d %s %llu, which needs it",
             watch_rank_name(comm, who, name, sizeof(name)),
             kind == WATCH_FAIL_ABORTED ? "aborted the communicator (ncclCommAbort)"
                                        : "left the communicator (ncclCommDestroy or process exit)",
             (unsigned long long)left, (unsigned long long)__atomic_load_n(&w->leftSent[side], __ATOMIC_RELAXED),
             comm->rank, comm->rank, doing, (unsigned long long)c);
}

/* A neighbour that left after completing `left` collectives and making
 * leftSent sends to this rank: collective number `c` (1-based), any send
 * to it, or a receive from it beyond those sends would wait forever. */
static ncclResult_t watch_left_check(struct ncclComm* comm, int side, uint64_t c, int peer, int kind) {
  watch_comm_t* w = &comm->watch;
  uint64_t left = __atomic_load_n(&w->leftAt[side], __ATOMIC_ACQUIRE);
  if (left == UINT64_MAX) return ncclSuccess;
  if (kind == 1) {
    if (c <= left) return ncclSuccess;
    watch_left_fail(comm, side, left, "calls collective", c);
    return ncclRemoteError;
  }
  if (peer != watch_side_rank(comm, side)) return ncclSuccess;
  if (kind == 2) {
    watch_left_fail(comm, side, left, "calls a send to it after collective", c);
    return ncclRemoteError;
  }
  uint64_t k = __atomic_load_n(&w->rec.recvFrom[side], __ATOMIC_RELAXED) + 1;
  if (k <= __atomic_load_n(&w->leftSent[side], __ATOMIC_RELAXED)) return ncclSuccess; /* sent before it left */
  watch_left_fail(comm, side, left, "calls receive from it number", k);
  return ncclRemoteError;
}

/* Counts a send (kind 2) or receive (3) with a neighbour, by delta. */
static void watch_p2p_count(struct ncclComm* comm, int kind, int peer, int64_t delta) {
  watch_rec_t* r = &comm->watch.rec;
  for (int side = 0; side < 2 && kind != 1; side++) {
    if (peer != watch_side_rank(comm, side)) continue;
    uint64_t* n = kind == 2 ? &r->sentTo[side] : &r->recvFrom[side];
    __atomic_store_n(n, __atomic_load_n(n, __ATOMIC_RELAXED) + (uint64_t)delta, __ATOMIC_RELEASE);
  }
}

void watch_p2p_refused(struct ncclComm* comm, int kind, int peer) { watch_p2p_count(comm, kind, peer, -1); }

ncclResult_t watch_op_enter(struct ncclComm* comm, int kind, int coll, uint64_t count, int type, int peer) {
  watch_rec_t* r = &comm->watch.rec;
  uint64_t c = __atomic_load_n(&r->collEntered, __ATOMIC_RELAXED) + (kind == 1);
  /* A departure heard from afar first: it came before the neighbours'
   * goodbyes it caused, and names the rank that left first. */
  MK_CHECK(watch_far_check(comm, kind, c, peer));
  if ((__atomic_load_n(&comm->watch.leftAt[0], __ATOMIC_RELAXED) & __atomic_load_n(&comm->watch.leftAt[1], __ATOMIC_RELAXED)) != UINT64_MAX) {
    ncclResult_t res = watch_left_check(comm, 0, c, peer, kind);
    if (res == ncclSuccess) res = watch_left_check(comm, 1, c, peer, kind);
    if (res != ncclSuccess) {
      char text[WATCH_TEXT_MAX];
      watch_failure(comm, text, sizeof(text));
      return MK_FAIL(res, "Rank %d: %s", comm->rank, text);
    }
  }
  /* Relaxed stores: the status reader takes what it finds. */
  __atomic_store_n(&r->lastKind, kind, __ATOMIC_RELAXED);
  __atomic_store_n(&r->lastColl, coll, __ATOMIC_RELAXED);
  __atomic_store_n(&r->lastCount, count, __ATOMIC_RELAXED);
  __atomic_store_n(&r->lastType, type, __ATOMIC_RELAXED);
  __atomic_store_n(&r->lastPeer, peer, __ATOMIC_RELAXED);
  __atomic_store_n(&r->lastNs, mk_now_ns(), __ATOMIC_RELAXED);
  /* Sequentially consistent, as the watch thread's farAt: one of the two
   * sees the other's store (watch_far.c), so check again after it. */
  if (kind == 1) __atomic_store_n(&r->collEntered, c, __ATOMIC_SEQ_CST);
  else __atomic_store_n(&r->p2pEntered, __atomic_load_n(&r->p2pEntered, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
  watch_p2p_count(comm, kind, peer, 1);
  return watch_far_check(comm, kind, c, peer);
}
