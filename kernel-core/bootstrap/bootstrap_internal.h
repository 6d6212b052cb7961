/* Private to the bootstrap module: wire formats and the state. */
#ifndef MKCCL_BOOTSTRAP_INTERNAL_H
#define MKCCL_BOOTSTRAP_INTERNAL_H

#include <pthread.h>

#include "base/err.h"
#include "bootstrap/bootstrap.h"

#define BOOTSTRAP_PROTO_VERSION 1u
/* The magic of ids named by NCCL_COMM_ID: every process must agree on it
 * without talking, so it cannot be random. */
#define BOOTSTRAP_MAGIC_COMM_ID 0x6d6b63636c494430ull /* "mkcclID0" */

/* Connection types (sock_hello_t.type). */
enum {
  BOOTSTRAP_CONN_ROOT_REGISTER = 1, /* rank -> its root: here I am, tell me my next */
  BOOTSTRAP_CONN_ROOT_NEXT = 2,     /* first rank of a block -> the previous root */
  BOOTSTRAP_CONN_RING = 3,          /* rank -> next rank */
  BOOTSTRAP_CONN_P2P = 4,           /* rank -> any rank: tagged messages */
};

/* More ranks than any job has: a registration claiming more is garbage
 * (the root allocates per rank it serves). Found by fuzz_bootstrap_root. */
#define BOOTSTRAP_MAX_RANKS (1 << 20)

/* rank -> root, after the hello. */
typedef struct {
  int32_t rank, nRanks, nRoots, root;
  sock_addr_t listenAddr;
} bootstrap_root_info_t;

/* root -> rank: the next rank's address, or why not. */
#define BOOTSTRAP_MISSING_SHOWN 8
typedef struct {
  int32_t status; /* 0 ok, else bootstrap_root_status */
  int32_t nMissing;
  int32_t missing[BOOTSTRAP_MISSING_SHOWN];
  int32_t timeoutSec;
  int32_t pad;
  sock_addr_t next;
} bootstrap_root_reply_t;

enum { BOOTSTRAP_ROOT_OK = 0, BOOTSTRAP_ROOT_TIMEOUT = 1, BOOTSTRAP_ROOT_MISMATCH = 2 };

/* Before every message on a P2P connection. */
typedef struct {
  int32_t tag;
  uint32_t pad;
  uint64_t size;
} bootstrap_msg_hdr_t;
#define BOOTSTRAP_MSG_MAX (1ull << 30) /* more is garbage, not a message */

/* An accepted connection whose hello has not fully arrived. */
typedef struct {
  int fd;
  sock_addr_t addr;
  int64_t deadline;
  size_t got;
  sock_hello_t hello;
} bootstrap_pending_t;
#define BOOTSTRAP_PENDING_MAX 64

/* A message read while looking for another one. */
typedef struct bootstrap_unexpected {
  struct bootstrap_unexpected* next;
  int peer, tag;
  size_t size;
  void* data;
} bootstrap_unexpected_t;

struct bootstrap_state {
  int rank, nRanks;
  uint64_t magic; /* of the communicator: handles[0].magic */
  volatile uint32_t* abortFlag;
  int64_t timeoutMs;
  int64_t handshakeMs;

  int listenFd;
  sock_addr_t listenAddr;
  bootstrap_pending_t pending[BOOTSTRAP_PENDING_MAX];
  int nPending;

  int ringSendFd, ringRecvFd;
  pthread_mutex_t ringLock;

  sock_addr_t* peerAddrs; /* [nRanks] */
  int* sendFds;           /* [nRanks] outgoing P2P connections, -1 until used */
  int* recvFds;           /* [nRanks] incoming P2P connections, -1 until accepted */
  bootstrap_unexpected_t* unexpected;
  pthread_mutex_t sendLock, recvLock;
};

/* sock status -> result: aborted is ncclInternalError (as NCCL), a peer that
 * is gone or late ncclRemoteError, the rest ncclSystemError. */
ncclResult_t bootstrap_result(int sockStatus);
/* The socket layer's last error (sock_error), naming MKCCL_BOOTSTRAP_TIMEOUT
 * when that deadline is what passed: every bootstrap wait runs against it. */
const char* bootstrap_sock_error(int sockStatus);
int64_t bootstrap_deadline(const bootstrap_state_t* state);

/* Accepts and identifies incoming connections until *slot >= 0 (a slot of
 * the state set by a RING or P2P hello), dropping strays. recvLock held. */
ncclResult_t bootstrap_conn_wait(bootstrap_state_t* state, int* slot, int64_t deadline, const char* what);
/* One round of bootstrap_conn_wait: polls the listener and the pending
 * connections for up to pollMs, accepts, reads hellos, files or drops
 * (fuzz_bootstrap_peer drives the listener with it). recvLock held. */
void bootstrap_conn_poll(bootstrap_state_t* state, int pollMs);
/* Opens this rank's P2P connection to peer (hello included). */
ncclResult_t bootstrap_connect_p2p(bootstrap_state_t* state, int peer, int64_t deadline, int* fd);
/* Closes the pending connections. */
void bootstrap_conn_close_pending(bootstrap_state_t* state);

#endif
