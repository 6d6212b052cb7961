/* Connection setup, never blocking: listen/accept on the receive side,
 * connect on the send side (net_socket_listen.c, net_socket_connect.c); the
 * handshake is in net_socket_wire.h, the handle in net_socket_handle.h. */
#ifndef NET_SOCKET_SETUP_H
#define NET_SOCKET_SETUP_H

#include "nccl.h"

/* trafficClass: NCCL_NET_TRAFFIC_CLASS_UNDEF or an IP TOS / IPv6 class;
 * maxFlows: the context's cap on flows per peer (<= 0: none), see
 * net_socket_layout_resolve. */
ncclResult_t net_socket_listen(int dev, void* handle, void** listenComm, int trafficClass, int maxFlows);
ncclResult_t net_socket_accept(void* listenComm, void** recvComm);
ncclResult_t net_socket_close_listen(void* listenComm);
ncclResult_t net_socket_connect(int dev, void* handle, void** sendComm, int trafficClass);

#endif
