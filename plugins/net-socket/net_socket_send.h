/* The send path: isend queues a message's header (with a small payload
 * inline) for the control socket and its chunks for the data sockets. Sizes
 * are bounded by INT_MAX (test reports them as int). */
#ifndef NET_SOCKET_SEND_H
#define NET_SOCKET_SEND_H

#include <stddef.h>

#include "nccl.h"
#include "net_socket_comm.h"

ncclResult_t net_socket_isend(void* sendComm, void* data, size_t size, int tag, void** request);
/* Writes what the control socket takes of the queued headers and payloads. */
ncclResult_t net_socket_tx_progress(net_socket_comm_t* comm);

#endif
