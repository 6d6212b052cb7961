/* A connection (send or receive side): control socket, data sockets with
 * their task rings, helper threads, and the request pool.
 *
 * Threads: the caller (NCCL's proxy) owns everything but the data-socket
 * rings' consumer side, the per-socket progress and the `pending` counters,
 * which helper threads drive (net_socket_helper.h). A comm is used by one
 * caller thread at a time. */
#ifndef NET_SOCKET_COMM_H
#define NET_SOCKET_COMM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "nccl.h"
#include "net/nccl_net.h"
#include "net_socket_layout.h"
#include "net_socket_wire.h"

#define NET_SOCKET_MAX_REQUESTS NCCL_NET_MAX_REQUESTS
#define NET_SOCKET_MAX_RECVS 8
/* Early messages a receive comm holds at most (net_socket_unexp.h). */
#define NET_SOCKET_MAX_UNEXPECTED (NET_SOCKET_MAX_REQUESTS * NET_SOCKET_MAX_RECVS)
/* Tasks a data socket may hold: one chunk of every sub-receive in flight
 * and of every early message. */
#define NET_SOCKET_RING (NET_SOCKET_MAX_REQUESTS * NET_SOCKET_MAX_RECVS + NET_SOCKET_MAX_UNEXPECTED)
/* Queued control messages (header, inline payload) one sendmsg carries. */
#define NET_SOCKET_TX_BATCH 16
/* Receive read-ahead on the control socket: what one recvmsg brings beyond
 * the current message (next headers, small payloads). */
#define NET_SOCKET_RXBUF 4096

/* One message: a send, or one buffer of a (grouped) receive. */
typedef struct {
  char* data;
  size_t size;        /* send: bytes to send; receive: room in data */
  size_t received;    /* receive: bytes the matched message carried */
  int tag;
  int matched;        /* receive: a header has been matched to it */
  atomic_int pending; /* chunks (or inline payload) not yet moved */
} net_socket_sub_t;

typedef struct net_socket_request {
  struct net_socket_comm* comm;
  int used;
  int n;             /* subs in use: 1 for a send */
  int ctrlDone;      /* send: header (and inline payload) written */
  int unpackSlot;    /* unpack mode (net_socket_unpack.h): the queue slot, */
  uint64_t unpackSeq; /* the receive number, */
  int awaitConsumed; /* and, once complete, held until irecvConsumed */
  uint64_t seq;      /* posting order, for receive matching */
  net_socket_sub_t subs[NET_SOCKET_MAX_RECVS];
  void* pEvents[NET_SOCKET_MAX_RECVS]; /* NetPlugin profiler events per buffer (net_socket_prof.c) */
  /* send: what goes on the control socket, header then inline payload */
  net_socket_hdr_t hdr;
  char* tail;
  size_t tailLen;
} net_socket_request_t;

typedef struct {
  char* data;
  size_t size;
  net_socket_sub_t* sub;
} net_socket_task_t;

/* A data socket: a single-producer (caller) single-consumer (helper) ring. */
typedef struct {
  int fd;
  _Atomic uint32_t head; /* next task the helper moves */
  _Atomic uint32_t tail; /* next free slot */
  size_t offset;         /* helper: bytes of ring[head] already moved */
  net_socket_task_t ring[NET_SOCKET_RING];
} net_socket_data_t;

typedef struct {
  struct net_socket_comm* comm;
  int index;
  int efd; /* eventfd: new tasks, or stop */
  pthread_t thread;
  int started;
  atomic_int sleeping;
  atomic_int stop;
} net_socket_helper_t;

enum { NET_SOCKET_RX_HDR = 0, NET_SOCKET_RX_MATCH = 1, NET_SOCKET_RX_DATA = 2 };

typedef struct net_socket_comm {
  int isSend;
  int ctrlFd;
  int nSocks;
  int nThreads;
  size_t minChunk;
  size_t inlineMax;
  int64_t helperSpinNs;           /* MKCCL_SOCKET_HELPER_SPIN_US, in ns */
  net_socket_data_t* data;        /* nSocks */
  net_socket_helper_t* helpers;   /* nThreads */
  uint32_t nextSock;              /* round-robin position, advanced in message order */
  atomic_int error;               /* first fatal error (ncclResult_t); the comm is dead after it */
  net_socket_request_t reqs[NET_SOCKET_MAX_REQUESTS];
  uint64_t nextSeq;
  /* send side: messages whose control part is not fully written, in isend order */
  net_socket_request_t* txq[NET_SOCKET_MAX_REQUESTS];
  uint32_t txHead, txTail;
  size_t txOff; /* bytes of the head message's header then payload written */
  /* receive side: the header being read and the message it goes to */
  int rxState;
  net_socket_hdr_t rxHdr;
  size_t rxOff;
  net_socket_sub_t* rxSub;
  int rxClosed; /* the peer closed between messages: what it sent is all there is */
  size_t rxBufHead, rxBufTail; /* unread bytes of rxBuf */
  char rxBuf[NET_SOCKET_RXBUF];
  struct net_socket_unpack* unpack; /* unpack mode's queue, NULL for ordinary receives */
  /* receive side: early messages, in arrival order (net_socket_unexp.h) */
  struct net_socket_unexp* unexpHead;
  int unexpCount;
  size_t unexpBytes, unexpMaxBytes;
} net_socket_comm_t;

/* A comm with nSocks data sockets (fds -1) and ctrlFd -1; NULL on failure. */
net_socket_comm_t* net_socket_comm_alloc(int isSend, int nSocks, int nThreads);
/* A free request slot of comm, or NULL when NET_SOCKET_MAX_REQUESTS are out. */
net_socket_request_t* net_socket_request_get(net_socket_comm_t* comm);
/* Socket options every connection socket gets (TCP_USER_TIMEOUT, traffic class). */
void net_socket_comm_sockopts(int fd, int trafficClass);
/* Stops the helpers and closes every fd; the memory stays (what a receive
 * comm keeps beside it is freed after this, nothing writes into it then). */
void net_socket_comm_stop(net_socket_comm_t* comm);
/* Stops (if not yet), frees the comm. A receive comm's early messages and
 * unpack queue are the receive path's to free (net_socket_recv_free). */
void net_socket_comm_free(net_socket_comm_t* comm);

/* Records the first fatal error and shuts the sockets down, so the peer
 * fails too instead of waiting; returns the comm's (first) error. */
ncclResult_t net_socket_comm_fail(net_socket_comm_t* comm, ncclResult_t res);

/* Wakes a helper sleeping in poll() (its eventfd). */
static inline void net_socket_helper_wake(const net_socket_helper_t* h) {
  uint64_t one = 1;
  ssize_t n = write(h->efd, &one, sizeof(one)); /* EAGAIN: already pending, as good */
  (void)n;
}

#endif
