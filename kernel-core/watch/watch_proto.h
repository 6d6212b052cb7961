/* Private to the watch module: what travels on its connections. Every
 * connection starts with a sock hello whose magic is the communicator's
 * (salted, so a bootstrap hello is never taken for one of ours). */
#ifndef MKCCL_WATCH_PROTO_H
#define MKCCL_WATCH_PROTO_H

#include <stdint.h>

#include "watch/watch.h"

#define WATCH_PROTO_VERSION 3u
#define WATCH_MAGIC_SALT 0x5741544348000000ull /* "WATCH" */

enum { WATCH_CONN_RING = 1, WATCH_CONN_STATUS = 2 };

/* On ring connections, either way. */
enum { WATCH_MSG_BYE = 1, WATCH_MSG_FAIL = 2 };
#define WATCH_MSG_TEXT WATCH_TEXT_MAX
typedef struct {
  uint32_t type;
  int32_t from;    /* the sender's rank */
  int32_t kind;    /* BYE: WATCH_FAIL_LEFT or _ABORTED; FAIL: the failure's kind */
  int32_t subject; /* FAIL: the failed rank */
  uint64_t seq;    /* BYE: collectives the sender completed; FAIL of a departure: those the departed
                      rank completed (only later ones fail), else UINT64_MAX */
  uint64_t sent;   /* BYE: sends the sender made to the rank it says goodbye to */
  char text[WATCH_MSG_TEXT]; /* FAIL: its text, as the first rank to see it wrote it */
} watch_msg_t;

/* A rank's answer to a status query (TCP listener, and per local comm on the
 * unix socket). Ages, not times: clocks differ between hosts. */
typedef struct {
  uint64_t commHash;
  int32_t rank, nRanks;
  int32_t pid, cudaDev;
  char host[64];
  uint64_t collEntered, collDone, p2pEntered;
  int32_t lastKind, lastColl, lastType, lastPeer;
  uint64_t lastCount;
  int64_t lastAgeNs; /* since the last call; -1: none */
  int32_t failKind, failRank;
  int32_t reachable; /* 0: the gatherer could not reach this rank */
  int32_t pad;
} watch_status_t;

/* The unix socket's requests (abstract name WATCH_UNIX_PREFIX<pid>). */
#define WATCH_UNIX_PREFIX "mkccl-status-"
enum { WATCH_REQ_LIST = 1, WATCH_REQ_GATHER = 2 };
typedef struct {
  uint32_t what;
  uint32_t pad;
  uint64_t commHash; /* GATHER */
  int32_t rank;      /* GATHER: which local rank of that comm asks */
  int32_t pad2;
} watch_req_t;
/* Answer: uint32_t n, then n watch_status_t. */

/* Fails comm because the neighbour on `side` left after `left` collectives
 * while this rank `doing` (a phrase) number c. */
void watch_left_fail(struct ncclComm* comm, int side, uint64_t left, const char* doing, uint64_t c);

/* watch_fail with the collectives a departed `rank` completed (seq), which
 * travel with the failure so each rank fails only what it has not passed. */
int watch_fail_seq(struct ncclComm* comm, int kind, int rank, uint64_t seq, int fromFd, const char* fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* msg to both neighbours but fromFd and those that left (the comm's lock held). */
void watch_msg_forward(struct ncclComm* comm, const watch_msg_t* msg, int fromFd);

/* watch_far.c: a failure message from a neighbour, on the watch thread
 * (msg->text terminated). One about a departure fails the comm now if this
 * rank is past the departed rank's last collective, else when it gets
 * there; any other at once. */
void watch_fail_heard(struct ncclComm* comm, const watch_msg_t* msg, int fromFd);
/* The calling thread entered collective c (kind 1) or a send or receive
 * with peer: ncclRemoteError when a departure heard from afar rules it out. */
ncclResult_t watch_far_check(struct ncclComm* comm, int kind, uint64_t c, int peer);
/* Whether this rank is in or past the collective after the first `seq`. */
int watch_past(const struct ncclComm* comm, uint64_t seq);

/* The watch thread (watch_thread.c). */
ncclResult_t watch_thread_add(struct ncclComm* comm);
void watch_thread_remove(struct ncclComm* comm);
/* Fills a status record of comm (lock held by the caller or comm quiet). */
void watch_status_fill(const struct ncclComm* comm, watch_status_t* st);
/* Sends msg on fd (the comm's watch lock held). */
int watch_msg_send(int fd, const watch_msg_t* msg);
/* Goodbye to both neighbours (watch_stage.c; the comm's lock is taken). */
void watch_say_goodbye(struct ncclComm* comm);
/* fn on every registered communicator, the registry locked. */
void watch_each_comm(void (*fn)(struct ncclComm* comm, void* arg), void* arg);
/* Answers one unix-socket client (watch_status.c); takes fd. */
void watch_status_serve_unix(int fd);
/* Answers one TCP status query on comm's listener (watch thread). */
void watch_status_serve_tcp(struct ncclComm* comm, int fd);

#endif
