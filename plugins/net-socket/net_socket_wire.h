/* What travels on the wire, in host byte order (both ends run this plugin).
 *
 * Connection: the connector opens nSocks data sockets and one control
 * socket to the listener and sends a hello on each. The listener drops any
 * socket whose hello does not carry the protocol tag and the magic of its
 * handle, and groups the others by connId (several connectors may be
 * accepted at once).
 *
 * Messages: each isend puts a header on the control socket, in isend order.
 * Inline messages (no data sockets, or small) follow their header there; the
 * others travel in chunks on the data sockets (net_socket_chunk.h). */
#ifndef NET_SOCKET_WIRE_H
#define NET_SOCKET_WIRE_H

#include <stdint.h>

#define NET_SOCKET_WIRE_PROTO 0x534e4b4du /* "MKNS" */
#define NET_SOCKET_WIRE_VERSION 1u

typedef struct {
  uint32_t proto;   /* NET_SOCKET_WIRE_PROTO */
  uint32_t version; /* NET_SOCKET_WIRE_VERSION */
  uint64_t magic;   /* the listener's magic, from the handle */
  uint64_t connId;  /* the connector's comm: groups its sockets */
  uint32_t index;   /* 0..nSocks-1 data socket, nSocks: control socket */
  uint32_t nSocks;
} net_socket_hello_t;

#define NET_SOCKET_HDR_CHECK 0x4d4bu /* catches a desynchronised stream */
#define NET_SOCKET_HDR_INLINE 0x1u

typedef struct {
  uint16_t check;     /* NET_SOCKET_HDR_CHECK */
  uint16_t flags;     /* NET_SOCKET_HDR_INLINE: the data follows on the control socket */
  int32_t tag;
  uint64_t size;      /* bytes sent */
  uint64_t chunkSize; /* data-socket chunks (ignored inline) */
} net_socket_hdr_t;

_Static_assert(sizeof(net_socket_hello_t) == 32, "hello is 32 bytes on the wire");
_Static_assert(sizeof(net_socket_hdr_t) == 24, "header is 24 bytes on the wire");

#endif
