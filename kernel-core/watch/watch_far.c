/* A departure heard from farther round the ring. A rank that fails a
 * collective because a neighbour left passes the failure on; a rank that
 * receives it may still be finishing the departed rank's last collective,
 * whose data are all sent. So the failure carries how many collectives the
 * departed rank completed, and a rank fails when it is past them, at once
 * or when it gets there; sends and receives with the departed rank fail. */
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "comm/comm.h"
#include "watch/watch_proto.h"

int watch_past(const struct ncclComm* comm, uint64_t seq) {
  const watch_rec_t* r = &comm->watch.rec;
  uint64_t entered = __atomic_load_n(&r->collEntered, __ATOMIC_SEQ_CST);
  uint64_t done = __atomic_load_n(&r->collDone, __ATOMIC_ACQUIRE);
  return comm->cudaDev >= 0 ? entered > seq : entered > done && entered > seq;
}

void watch_fail_heard(struct ncclComm* comm, const watch_msg_t* msg, int fromFd) {
  watch_comm_t* w = &comm->watch;
  int departure = (msg->kind == WATCH_FAIL_LEFT || msg->kind == WATCH_FAIL_ABORTED) && msg->seq != UINT64_MAX;
  if (!departure) {
    watch_fail(comm, msg->kind, msg->subject, fromFd, "%s", msg->text);
    return;
  }
  if (!watch_past(comm, msg->seq)) {
    pthread_mutex_lock(&w->lock);
    int first = __atomic_load_n(&w->farAt, __ATOMIC_RELAXED) == UINT64_MAX;
    if (first || msg->seq < w->farAt) {
      w->farRank = msg->subject;
      w->farKind = msg->kind;
      snprintf(w->farText, sizeof(w->farText), "%s", msg->text);
      __atomic_store_n(&w->farAt, msg->seq, __ATOMIC_SEQ_CST);
    }
    if (first) watch_msg_forward(comm, msg, fromFd); /* farther ranks decide for themselves */
    pthread_mutex_unlock(&w->lock);
    /* A collective entered meanwhile saw no farAt: caught here. */
    if (!watch_past(comm, msg->seq)) return;
  }
  watch_fail_seq(comm, msg->kind, msg->subject, msg->seq, fromFd, "%s", msg->text);
}

ncclResult_t watch_far_check(struct ncclComm* comm, int kind, uint64_t c, int peer) {
  watch_comm_t* w = &comm->watch;
  uint64_t far = __atomic_load_n(&w->farAt, __ATOMIC_SEQ_CST);
  if (far == UINT64_MAX) return ncclSuccess;
  pthread_mutex_lock(&w->lock);
  int rank = w->farRank, fkind = w->farKind;
  char text[WATCH_TEXT_MAX];
  snprintf(text, sizeof(text), "%s", w->farText);
  pthread_mutex_unlock(&w->lock);
  if (kind == 1 ? c <= far : peer != rank) return ncclSuccess;
  watch_fail_seq(comm, fkind, rank, far, -1, "%s", text);
  watch_failure(comm, text, sizeof(text));
  return MK_FAIL(ncclRemoteError, "Rank %d: %s", comm->rank, text);
}
