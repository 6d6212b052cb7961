/* The proxy thread: one per process, progressing the operations of every
 * communicator whose transports need one (net; shm in copy-engine mode).
 * Calling threads post ops through a lock-free queue; the thread keeps them
 * in an active list in post order and calls each op's transport
 * proxyProgress until the op says it is done. Ops live in lanes, each its
 * own queue, list and lock: lane 0 holds every op whose connection shares
 * state with others, and with MKCCL_PROXY_LANES set, lanes 1.. the ops of
 * channels whose connections do not (MKCCL_CONN_PROXY_LANE), by channel. A
 * thread waiting on a channel progresses that channel's lane while other
 * threads progress others. When nothing moves the thread backs
 * off: after NCCL_PROXY_IDLE_THRESHOLD idle rounds it sleeps
 * NCCL_PROXY_IDLE_SLEEP_US per round; with no op at all it blocks. */
#ifndef MKCCL_PROXY_PROXY_H
#define MKCCL_PROXY_PROXY_H

#include <stdatomic.h>
#include <stdint.h>

#include "nccl.h"
#include "proxy/op_queue.h"
#include "transport/mkccl_transport_v1.h"

/* One communicator as the proxy sees it. */
typedef struct proxy_client {
  volatile uint32_t* abortFlag;   /* raised by the proxy on a transport error */
  _Atomic int error;              /* first error (ncclResult_t), 0 if none */
  _Atomic int errorPeer;          /* the peer of the connection that failed first, -1: none known */
  _Atomic int dropped;            /* an op was dropped unfinished (abort flag or error) */
  _Atomic uint64_t opsPosted;
  _Atomic uint64_t opsDone;
  _Atomic uint64_t progress;      /* bumped whenever one of its ops moves (flush's "no progress" test) */
  int64_t timeoutSec;             /* flush/detach give up after this long without progress; 0: never */
  int rank;
  struct profile_comm* profile;   /* ProxyCtrl events of the ops it appends (set after attach; may be NULL) */
} proxy_client_t;

typedef ncclResult_t (*proxy_progress_fn)(void* tctx, mkcclProxyOp_v1* op);

typedef struct proxy_op {
  op_queue_node_t node; /* first: the queue links ops through it */
  struct proxy_op* nextActive;
  proxy_client_t* client;
  proxy_progress_fn progress;
  void* tctx;
  int lane; /* proxy_lane_for its connections; set before posting */
  mkcclProxyOp_v1 args;
} proxy_op_t;

/* The first attach starts the thread; the last detach stops it. Detach
 * flushes first (proxy_client_flush): it never returns while the thread may
 * still touch one of the client's ops. */
ncclResult_t proxy_client_attach(proxy_client_t* client, volatile uint32_t* abortFlag, int rank);
void proxy_client_detach(proxy_client_t* client);

/* Wait until every op the client posted is done or dropped. Ops of an
 * aborted client are dropped by the loop. When none of them moves for
 * client->timeoutSec seconds (MKCCL_TIMEOUT; 0: wait forever), the flush
 * decides the peer is dead or stuck: it logs a WARN, records ncclRemoteError
 * as the client's error and raises its abort flag, so the loop drops the
 * rest; it still returns only once they are gone. Returns the client's
 * error (ncclSuccess if none). `what` names the caller in the WARN. */
ncclResult_t proxy_client_flush(proxy_client_t* client, const char* what);

/* Waits up to ms for the client's ops to be done, giving up quietly when
 * they are not (nothing failed, nothing dropped): a process at exit lets
 * what its last calls queued leave before its threads die. Returns whether
 * they all are. */
int proxy_client_drain_for(proxy_client_t* client, int ms);

/* An op with zeroed args, ready to fill. */
ncclResult_t proxy_op_alloc(proxy_op_t** op);
void proxy_op_free(proxy_op_t* op);
/* Hand the op to the proxy thread, which owns (and frees) it from now on. */
void proxy_op_post(proxy_client_t* client, proxy_op_t* op);

/* Lanes: 0 for ops that must progress one at a time, then up to
 * PROXY_CHANNEL_LANES lanes of channels. */
#define PROXY_CHANNEL_LANES 8
#define PROXY_LANES (1 + PROXY_CHANNEL_LANES)
/* The lane of a connection of channel channelId whose transport lets its
 * ops progress concurrently with others (`concurrent`), or 0; MKCCL_PROXY_LANES
 * channel lanes at most (0: everything in lane 0). Ops of one connection
 * always land in one lane, so they still start in post order. */
int proxy_lane_for(int channelId, int concurrent);

/* Run one progress round of `lane` on the calling thread if no other thread
 * is in one; 1 when something moved. Host executors waiting on a net
 * connection call it with the connection's lane instead of sleeping. */
int proxy_progress_help(int lane);

/* All ops posted by this client are done. */
int proxy_client_drained(proxy_client_t* client);
/* The client failed: `res` becomes its error (unless it has one already)
 * and its abort flag goes up, so its executors stop waiting and its ops are
 * dropped; the error becomes the communicator's async error. */
void proxy_client_fail(proxy_client_t* client, ncclResult_t res);
/* ncclSuccess, or the first error a transport reported for this client. */
ncclResult_t proxy_client_error(proxy_client_t* client);
/* The peer whose connection reported it, -1 when not known. */
int proxy_client_error_peer(proxy_client_t* client);
/* Whether an op of the client was dropped unfinished. */
int proxy_client_dropped(proxy_client_t* client);

/* Diagnostics (watchdogs): the client's counters and its active ops, as
 * WARN lines that start with `why`. */
void proxy_client_dump(proxy_client_t* client, const char* why);

/* Run the progress loop once on the calling thread (tests use this with the
 * thread absent, through proxy_testing_*). */
typedef struct proxy_loop proxy_loop_t;
ncclResult_t proxy_loop_create(proxy_loop_t** loop);
void proxy_loop_post(proxy_loop_t* loop, proxy_op_t* op);
/* One round over the active ops; returns the number of ops still active. */
int proxy_loop_round(proxy_loop_t* loop, int* idle);
void proxy_loop_destroy(proxy_loop_t* loop);

#endif
