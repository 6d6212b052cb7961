/* Early messages on a receive comm.
 *
 * Headers come in send order, and a message's data sits in the streams
 * behind everything sent before it. A comm that carries several tags (the
 * core's point-to-point connections of all channels to one peer share one)
 * would stop at a message whose receive is not posted yet while a receive
 * of another tag waits behind it; when that other receive is what lets the
 * first one be posted (another channel's progress), the ranks deadlock.
 *
 * So when a header has no receive but some other receive is waiting, the
 * message is read into a buffer of its own and kept here, in arrival order.
 * A receive posted later takes the earliest kept message of its tag (so
 * each tag's messages still match in send order), and gets its bytes
 * copied once they are all in. A comm keeps at most NET_SOCKET_MAX_UNEXPECTED
 * messages and MKCCL_SOCKET_UNEXPECTED_MAX_BYTES bytes; past that, and with
 * no receive waiting, a header waits for its receive as before (the
 * streams' back-pressure holds the sender). Unpack mode never keeps any:
 * its comms carry one tag. */
#ifndef NET_SOCKET_UNEXP_H
#define NET_SOCKET_UNEXP_H

#include "net_socket_comm.h"

typedef struct net_socket_unexp {
  net_socket_sub_t sub;    /* data: a buffer of its own; received: the message's size; pending: chunks */
  net_socket_sub_t* taker; /* the posted buffer that took it, NULL until one does */
  struct net_socket_unexp* next;
} net_socket_unexp_t;

/* comm->rxHdr has no posted buffer: keep the message if some other receive
 * waits and the limits allow. *kept: the buffer to read it into, as into a
 * matched one, or NULL when it is not kept. */
ncclResult_t net_socket_unexp_keep(net_socket_comm_t* comm, net_socket_sub_t** kept);

/* The earliest kept message of `tag` that no posted buffer took yet, or NULL. */
net_socket_unexp_t* net_socket_unexp_find(net_socket_comm_t* comm, int tag);

/* A buffer just posted takes u (its size checked by the caller): it
 * completes once u's data is all in and copied. */
void net_socket_unexp_give(net_socket_unexp_t* u, net_socket_sub_t* sub);

/* Copies every taken message whose data is all in to its buffer, and frees it. */
void net_socket_unexp_progress(net_socket_comm_t* comm);

/* Frees every kept message (the helpers are stopped: net_socket_comm_stop). */
void net_socket_unexp_free(net_socket_comm_t* comm);

#endif
