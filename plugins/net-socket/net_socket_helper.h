/* Helper threads and the data-socket task rings they drain: the caller
 * queues a message's chunks (net_socket_chunk.h) on the data sockets, socket
 * s's helper (s % nThreads) moves them, and each chunk moved counts down its
 * buffer's `pending`. Stopped with the comm (net_socket_comm_stop). */
#ifndef NET_SOCKET_HELPER_H
#define NET_SOCKET_HELPER_H

#include <stddef.h>

#include "nccl.h"
#include "net_socket_comm.h"

/* Starts the helper threads once every socket is connected. */
ncclResult_t net_socket_helpers_start(net_socket_comm_t* comm);

/* Queues the chunks of a message over the data sockets, round-robin from
 * comm->nextSock; sub->pending becomes the chunk count. */
ncclResult_t net_socket_helper_schedule(net_socket_comm_t* comm, net_socket_sub_t* sub, char* data, size_t size,
                                        size_t chunkSize);

#endif
