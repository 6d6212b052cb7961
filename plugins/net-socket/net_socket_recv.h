/* The receive path: irecv posts buffers, the control stream's headers are
 * matched to them (or kept as early messages, net_socket_unexp.h), their
 * payloads read inline or by the helpers; in unpack mode a receive lands in
 * the comm's UNPACK queue (net_socket_unpack.h). */
#ifndef NET_SOCKET_RECV_H
#define NET_SOCKET_RECV_H

#include <stddef.h>

#include "nccl.h"
#include "net_socket_comm.h"

ncclResult_t net_socket_irecv(void* recvComm, int n, void** data, const size_t* sizes, const int* tags,
                              void** request);
/* Reads what the control socket has: headers matched, inline payloads. */
ncclResult_t net_socket_rx_progress(net_socket_comm_t* comm);
/* Frees a receive comm with its early messages and unpack queue. */
void net_socket_recv_free(net_socket_comm_t* comm);

#endif
