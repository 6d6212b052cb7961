/* The watch's two stages: a listener before "peer-info" (its port goes out
 * in the peer info), the ring connections after it; and the goodbye when
 * the communicator ends. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "base/param.h"
#include "comm/comm.h"
#include "watch/watch_proto.h"

static uint64_t watch_magic(const struct ncclComm* comm) { return comm->magic ^ WATCH_MAGIC_SALT; }

ncclResult_t comm_watch_listen_stage_init(struct ncclComm* comm) {
  watch_comm_t* w = &comm->watch;
  w->listenFd = w->prevFd = w->nextFd = -1;
  w->leftAt[0] = w->leftAt[1] = UINT64_MAX;
  w->farAt = UINT64_MAX;
  pthread_mutex_init(&w->lock, NULL);
  if (!param_MKCCL_WATCH() || comm->nRanks == 1) return ncclSuccess;
  /* The address peers reach this rank's bootstrap at reaches this listener. */
  sock_addr_t addr = *bootstrap_peer_addr(comm->bootstrap, comm->rank), bound;
  sock_addr_set_port(&addr, 0);
  int rc = sock_listen(&addr, 16, &w->listenFd, &bound);
  if (rc != SOCK_OK) return MK_FAIL(ncclSystemError, "Rank %d: peer watch: cannot listen: %s", comm->rank, sock_error());
  w->port = sock_addr_port(&bound);
  return ncclSuccess;
}

void comm_watch_listen_stage_destroy(struct ncclComm* comm) {
  sock_close(&comm->watch.listenFd);
  pthread_mutex_destroy(&comm->watch.lock);
}

/* This rank's connection to the next one; the hello names this rank. */
static ncclResult_t watch_connect_next(struct ncclComm* comm, int next, int64_t deadline) {
  watch_comm_t* w = &comm->watch;
  sock_addr_t addr = *bootstrap_peer_addr(comm->bootstrap, next);
  sock_addr_set_port(&addr, comm->peerInfo[next].watchPort);
  int rc = sock_connect(&addr, deadline, comm->abortFlag, &w->nextFd);
  if (rc == SOCK_OK)
    rc = sock_hello_send(w->nextFd, watch_magic(comm), WATCH_CONN_RING, WATCH_PROTO_VERSION, (uint64_t)comm->rank,
                         deadline, comm->abortFlag);
  if (rc == SOCK_OK) return ncclSuccess;
  char name[160], where[SOCK_ADDR_STRLEN];
  ncclResult_t res = MK_FAIL(rc == SOCK_EABORT ? ncclInternalError : ncclRemoteError,
                             "Rank %d: peer watch: cannot reach %s at %s: %s", comm->rank,
                             watch_rank_name(comm, next, name, sizeof(name)),
                             sock_addr_to_string(&addr, where, sizeof(where), 1), sock_error());
  sock_close(&w->nextFd);
  return res;
}

/* The previous rank's connection: accepted, its hello checked; strays
 * (a status query arriving this early, a scanner) are dropped. */
static ncclResult_t watch_accept_prev(struct ncclComm* comm, int prev, int64_t deadline) {
  watch_comm_t* w = &comm->watch;
  for (;;) {
    int fd = -1;
    int rc = sock_accept(w->listenFd, deadline, comm->abortFlag, &fd, NULL);
    if (rc != SOCK_OK) {
      char name[160];
      return MK_FAIL(rc == SOCK_EABORT ? ncclInternalError : ncclRemoteError,
                     "Rank %d: peer watch: no connection from %s: %s", comm->rank,
                     watch_rank_name(comm, prev, name, sizeof(name)), sock_error());
    }
    sock_hello_t hello;
    int64_t helloDeadline = sock_deadline_ms(1000);
    rc = sock_recv_all(fd, &hello, sizeof(hello), helloDeadline < deadline ? helloDeadline : deadline, comm->abortFlag);
    if (rc == SOCK_OK && hello.type == WATCH_CONN_STATUS &&
        sock_hello_check(&hello, watch_magic(comm), WATCH_CONN_STATUS, WATCH_PROTO_VERSION) == SOCK_OK) {
      watch_status_serve_tcp(comm, fd); /* answered, and closed */
      continue;
    }
    if (rc == SOCK_OK) rc = sock_hello_check(&hello, watch_magic(comm), WATCH_CONN_RING, WATCH_PROTO_VERSION);
    if (rc == SOCK_OK && hello.arg == (uint64_t)prev) {
      w->prevFd = fd;
      return ncclSuccess;
    }
    MK_WARN("Rank %d: peer watch: dropped a connection that is not rank %d's: %s", comm->rank, prev,
            rc == SOCK_OK ? "another rank's hello" : sock_error());
    sock_close(&fd);
  }
}

ncclResult_t comm_watch_stage_init(struct ncclComm* comm) {
  watch_comm_t* w = &comm->watch;
  int n = comm->nRanks, next = (comm->rank + 1) % n, prev = (comm->rank + n - 1) % n;
  if (w->listenFd < 0) return ncclSuccess;
  /* MKCCL_WATCH differs between ranks: watch only those that listen. */
  int64_t secs = param_MKCCL_BOOTSTRAP_TIMEOUT();
  int64_t deadline = secs > 0 ? sock_deadline_ms(secs * 1000) : SOCK_NO_DEADLINE;
  ncclResult_t res = ncclSuccess;
  /* Every rank connects first, then accepts: a connect completes into the
   * listener's backlog, so no rank waits for another's accept. */
  if (comm->peerInfo[next].watchPort) MK_CHECK_GOTO(watch_connect_next(comm, next, deadline), res, fail);
  if (comm->peerInfo[prev].watchPort) MK_CHECK_GOTO(watch_accept_prev(comm, prev, deadline), res, fail);
  MK_CHECK_GOTO(watch_thread_add(comm), res, fail);
  w->registered = 1;
  return ncclSuccess;
fail:
  sock_close(&w->nextFd);
  sock_close(&w->prevFd);
  return res;
}

/* Goodbye on both ring connections: what this rank completed, so a
 * neighbour fails only what this rank will never join. */
void watch_say_goodbye(struct ncclComm* comm) {
  watch_comm_t* w = &comm->watch;
  watch_msg_t msg;
  memset(&msg, 0, sizeof(msg));
  msg.type = WATCH_MSG_BYE;
  msg.from = comm->rank;
  msg.kind = comm_state_get(comm) == COMM_STATE_ABORTED ? WATCH_FAIL_ABORTED : WATCH_FAIL_LEFT;
  msg.seq = __atomic_load_n(&w->rec.collDone, __ATOMIC_ACQUIRE);
  /* Leaving a communicator whose work failed here (a peer stopped, the
   * network broke) fails the neighbours' too: they may wait in the
   * collective that failed. A refused call (bad usage) fails nobody else. */
  ncclResult_t async = __atomic_load_n(&comm->asyncResult, __ATOMIC_ACQUIRE);
  int broken = async == ncclRemoteError || async == ncclSystemError || async == ncclInternalError;
  if (broken && __atomic_load_n(&w->failKind, __ATOMIC_ACQUIRE) == WATCH_FAIL_NONE) {
    char name[160];
    msg.type = WATCH_MSG_FAIL;
    msg.kind = WATCH_FAIL_ABORTED;
    msg.subject = comm->rank;
    msg.seq = UINT64_MAX; /* its collectives failed: the neighbours' too, at once */
    snprintf(msg.text, sizeof(msg.text), "%s left the communicator after an error of its own (%s)",
             watch_rank_name(comm, comm->rank, name, sizeof(name)), ncclGetErrorString(async));
  }
  pthread_mutex_lock(&w->lock);
  if (w->byeSent++) {
    pthread_mutex_unlock(&w->lock);
    return;
  }
  /* Each neighbour hears how many sends it was made, so it fails only the
   * receives this rank never matched. */
  msg.sent = __atomic_load_n(&w->rec.sentTo[0], __ATOMIC_ACQUIRE);
  if (w->prevFd >= 0 && !__atomic_load_n(&w->closed[0], __ATOMIC_RELAXED)) watch_msg_send(w->prevFd, &msg);
  msg.sent = __atomic_load_n(&w->rec.sentTo[1], __ATOMIC_ACQUIRE);
  if (w->nextFd >= 0 && !__atomic_load_n(&w->closed[1], __ATOMIC_RELAXED)) watch_msg_send(w->nextFd, &msg);
  pthread_mutex_unlock(&w->lock);
}

ncclResult_t comm_watch_goodbye_stage_init(struct ncclComm* comm) {
  (void)comm;
  return ncclSuccess;
}

void comm_watch_goodbye_stage_destroy(struct ncclComm* comm) { watch_say_goodbye(comm); }

void comm_watch_stage_destroy(struct ncclComm* comm) {
  watch_comm_t* w = &comm->watch;
  if (w->registered) watch_thread_remove(comm);
  w->registered = 0;
  watch_say_goodbye(comm); /* init failed after this stage: no "goodbye" stage ran */
  sock_close(&w->nextFd);
  sock_close(&w->prevFd);
}
