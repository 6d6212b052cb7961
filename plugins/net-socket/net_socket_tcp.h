/* Non-blocking TCP connect in two steps (start, then check), which
 * mkccl_sock does not offer: its sock_connect waits for the connection, and
 * the net ABI's connect() must never block. */
#ifndef NET_SOCKET_TCP_H
#define NET_SOCKET_TCP_H

#include "nccl.h"
#include "sock/sock.h"

/* Creates a non-blocking socket and starts connecting it to addr. */
ncclResult_t net_socket_tcp_connect_start(const sock_addr_t* addr, int* fd);
/* *ready = 1 once connected; an error if the connection failed. */
ncclResult_t net_socket_tcp_connect_check(int fd, const sock_addr_t* addr, int* ready);

#endif
