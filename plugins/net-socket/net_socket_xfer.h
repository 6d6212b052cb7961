/* The data path: isend/irecv post, test progresses and completes,
 * closeSend/closeRecv release. Sizes are bounded by INT_MAX (test reports
 * them as int); the version tables check narrower types before calling. */
#ifndef NET_SOCKET_XFER_H
#define NET_SOCKET_XFER_H

#include <stddef.h>

#include "nccl.h"
#include "net_socket_comm.h"

ncclResult_t net_socket_isend(void* sendComm, void* data, size_t size, int tag, void** request);
ncclResult_t net_socket_irecv(void* recvComm, int n, void** data, const size_t* sizes, const int* tags,
                              void** request);
ncclResult_t net_socket_test(void* request, int* done, int* sizes);
ncclResult_t net_socket_close_comm(void* comm);
/* Frees a receive comm with its early messages and unpack queue (net_socket_recv.c). */
void net_socket_recv_free(net_socket_comm_t* comm);

/* Progress of the control socket (net_socket_send.c / net_socket_recv.c). */
ncclResult_t net_socket_tx_progress(net_socket_comm_t* comm);
ncclResult_t net_socket_rx_progress(net_socket_comm_t* comm);

#endif
