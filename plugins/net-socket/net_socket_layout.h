/* How many helper threads and data sockets a connection gets, by NCCL's
 * rules: -2 means "detect" (from the NIC vendor: AWS ENA 2 threads x 8
 * sockets, Google gVNIC 4 x 1; anything else no helper thread, the caller of
 * test() moving the data on the control socket, unless the process may use
 * NET_SOCKET_AUTO_THREADS_CPUS CPUs or more: then 1 x 1, and 2 x 1 from
 * NET_SOCKET_AUTO_THREADS2_CPUS, because one thread copying both ways was the
 * limit there); at most 16 threads and 64 sockets (sockets per thread shrink
 * to fit). */
#ifndef NET_SOCKET_LAYOUT_H
#define NET_SOCKET_LAYOUT_H

#include <stdint.h>

#define NET_SOCKET_MAX_THREADS 16
#define NET_SOCKET_MAX_SOCKS 64
#define NET_SOCKET_LAYOUT_AUTO (-2)

typedef struct {
  int nThreads; /* helper threads; 0 when nSocks is 0 */
  int nSocks;   /* data sockets, nThreads * sockets per thread */
  int clamped;  /* a requested value was out of range and was changed */
} net_socket_layout_t;

#define NET_SOCKET_AUTO_THREADS_CPUS 16
#define NET_SOCKET_AUTO_THREADS2_CPUS 32

/* Detected defaults for a NIC whose PCI vendor id is `vendor` (0: unknown),
 * in a process that may run on `cpus` CPUs. */
void net_socket_layout_auto(unsigned vendor, int cpus, int* nThreads, int* nSocksPerThread);

/* maxFlows > 0 (setNetAttr's maxFlowsPerPeer) caps the TCP connections of
 * a detected layout, the control socket counted: 1 leaves no data socket
 * and no helper thread. Settings given explicitly are kept as they are. */
net_socket_layout_t net_socket_layout_resolve(int64_t nThreads, int64_t nSocksPerThread, unsigned vendor, int cpus,
                                              int maxFlows);

#endif
