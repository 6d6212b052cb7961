/* The connection handle listen() fills and connect() reads (at most
 * NCCL_NET_HANDLE_MAXSIZE bytes, copied between ranks by the host). */
#ifndef NET_SOCKET_HANDLE_H
#define NET_SOCKET_HANDLE_H

#include <stdint.h>

#include "net/nccl_net.h"
#include "sock/sock.h"

struct net_socket_connect_stage;

typedef struct {
  uint64_t magic;   /* the listener's random magic: its hellos must carry it */
  sock_addr_t addr; /* where the listener listens */
  int32_t nSocks;   /* data sockets per connection: the listener decides */
  int32_t nThreads; /* helper threads per connection */
  /* The connector's progress between its non-blocking connect() calls, kept in
   * its own copy of the handle (the host passes the same handle each time).
   * NULL as the listener writes it. */
  struct net_socket_connect_stage* stage;
} net_socket_handle_t;

_Static_assert(sizeof(net_socket_handle_t) <= NCCL_NET_HANDLE_MAXSIZE, "handle must fit NCCL_NET_HANDLE_MAXSIZE");

/* A random 64-bit value (magics, connection ids): net_socket_random.c. */
uint64_t net_socket_random64(void);

#endif
