/* Peer watch (docs/RELIABILITY.md): every rank of a communicator holds a TCP
 * connection to the rank before it and the rank after it in rank order, and
 * one thread per process watches them. A process that dies, however it
 * dies, has its connections closed by the kernel: its neighbours see the
 * end of the stream without a goodbye, record "rank R (host H, pid P)
 * died", raise the communicator's abort flag (every wait of every thread
 * ends) and pass the news around the ring, so every rank knows within
 * milliseconds, on any transport, host or GPU, and the hot path pays
 * nothing: the threads doing the work never look at these connections.
 *
 * A rank that leaves cleanly (ncclCommDestroy, ncclCommAbort, process exit)
 * says goodbye first, with the number of collectives it completed: a
 * neighbour then fails only the collectives the leaver never joined.
 *
 * The same listener answers status queries (mkccl-info --status): which
 * collective each rank is in, so the ranks the others wait for are named. */
#ifndef MKCCL_WATCH_WATCH_H
#define MKCCL_WATCH_WATCH_H

#include <pthread.h>
#include <stdint.h>

#include "nccl.h"

struct ncclComm;

/* What a rank last called: written by the calling thread at every call
 * (plain stores), read by the watch thread for status and departures. */
typedef struct {
  uint64_t collEntered; /* collectives called */
  uint64_t collDone;    /* of those, completed (host) or launched (GPU) */
  uint64_t p2pEntered;  /* sends and receives called */
  /* Per neighbour side (0 prev, 1 next; both when they are one rank):
   * sends to it and receives from it called and not refused. */
  uint64_t sentTo[2];
  uint64_t recvFrom[2];
  int32_t lastKind;     /* 0 none, 1 collective, 2 send, 3 recv */
  int32_t lastColl;     /* MK_COLL_* of the last collective, or WATCH_OP_PATTERN + 0/1/2 (AlltoAll, Gather, Scatter) */
  uint64_t lastCount;
  int32_t lastType;
  int32_t lastPeer; /* root or point-to-point peer, -1 */
  int64_t lastNs;   /* when (CLOCK_MONOTONIC) */
} watch_rec_t;

#define WATCH_OP_PATTERN 6 /* after MK_COLL_SENDRECV */

enum { WATCH_FAIL_NONE = 0, WATCH_FAIL_DIED, WATCH_FAIL_LEFT, WATCH_FAIL_ABORTED, WATCH_FAIL_HEARD };

#define WATCH_TEXT_MAX 512
typedef struct {
  int listenFd;
  int port;            /* of listenFd, in this rank's peer info */
  int prevFd, nextFd;  /* ring connections: -1 when absent */
  /* Per side (0 prev, 1 next), written by the watch thread: */
  uint64_t leftAt[2];  /* collectives the neighbour completed before its goodbye (UINT64_MAX: none yet) */
  uint64_t leftSent[2]; /* sends it made to this rank, with leftAt */
  int leftKind[2];     /* WATCH_FAIL_LEFT or _ABORTED, with leftAt */
  int closed[2];       /* its connection ended (after a goodbye): no longer watched */
  int registered;      /* with the watch thread */
  int byeSent;
  watch_rec_t rec;
  /* A departure heard from farther round the ring: a failure about a rank
   * that left after farAt collectives (UINT64_MAX: none). What this rank
   * has not passed yet fails only when it gets there (watch_far.c). */
  uint64_t farAt;
  int farRank, farKind;
  char farText[WATCH_TEXT_MAX];
  /* The first failure seen (the watch thread writes it once, under lock). */
  pthread_mutex_t lock;
  int failKind;
  int failRank;
  char failText[WATCH_TEXT_MAX];
} watch_comm_t;

/* Stages: "watch-listen" (before "peer-info": the port travels in the peer
 * info) and "watch" (after it: the ring connections and the thread). */
ncclResult_t comm_watch_listen_stage_init(struct ncclComm* comm);
void comm_watch_listen_stage_destroy(struct ncclComm* comm);
ncclResult_t comm_watch_stage_init(struct ncclComm* comm);
void comm_watch_stage_destroy(struct ncclComm* comm);
/* Stage "goodbye" (after the data path: its destroy runs before the data
 * path's, so neighbours hear the goodbye before the transports close). */
ncclResult_t comm_watch_goodbye_stage_init(struct ncclComm* comm);
void comm_watch_goodbye_stage_destroy(struct ncclComm* comm);

/* The calling thread is about to queue an operation: kind 1 collective
 * (coll, count, type, root), 2 send, 3 recv (peer). ncclRemoteError when a
 * neighbour has left before it (the operation could never complete), with
 * the last-error text saying who and when. */
ncclResult_t watch_op_enter(struct ncclComm* comm, int kind, int coll, uint64_t count, int type, int peer);
/* The collectives queued so far completed (host) or were launched (GPU). */
void watch_ops_done(struct ncclComm* comm);
/* A send (kind 2) or receive (3) that watch_op_enter let in was refused
 * before it was queued: its peer will not see it. */
void watch_p2p_refused(struct ncclComm* comm, int kind, int peer);

/* A failure the watch recorded (WATCH_FAIL_NONE: none); text may be NULL,
 * else gets the failure's text. */
int watch_failure(struct ncclComm* comm, char* text, size_t len);

/* The same, after waiting up to ms for the watch to tell why a transport
 * failed (a dead peer closes its transport connections and its watch
 * connection at once; the watch names it). */
int watch_failure_wait(struct ncclComm* comm, char* text, size_t len, int ms);
#define WATCH_CAUSE_WAIT_MS 200

/* Records a failure once (kind, the failed rank, a text), makes it the
 * communicator's async error (ncclRemoteError), raises its abort flag and
 * passes it on around the ring (except back to fromFd). Returns whether it
 * was the first. Any thread. */
int watch_fail(struct ncclComm* comm, int kind, int rank, int fromFd, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* "rank 3 (host h, pid 123)" for messages. */
const char* watch_rank_name(const struct ncclComm* comm, int rank, char* buf, size_t len);

#endif
