#include "net_socket_layout.h"

#define NET_SOCKET_VENDOR_AWS 0x1d0f
#define NET_SOCKET_VENDOR_GCP 0x1ae0

void net_socket_layout_auto(unsigned vendor, int cpus, int* nThreads, int* nSocksPerThread) {
  /* Helper threads pay where CPUs are plenty (two from 32 CPUs); on fewer,
   * several ranks' helpers share the cores and one each moves more. */
  *nThreads = cpus >= NET_SOCKET_AUTO_THREADS2_CPUS ? 2 : cpus >= NET_SOCKET_AUTO_THREADS_CPUS ? 1 : 0;
  *nSocksPerThread = 1;
  if (vendor == NET_SOCKET_VENDOR_AWS) {
    *nThreads = 2;
    *nSocksPerThread = 8;
  } else if (vendor == NET_SOCKET_VENDOR_GCP) {
    *nThreads = 4;
    *nSocksPerThread = 1;
  }
}

net_socket_layout_t net_socket_layout_resolve(int64_t nThreads, int64_t nSocksPerThread, unsigned vendor, int cpus,
                                              int maxFlows) {
  net_socket_layout_t l = {0, 0, 0};
  int autoThreads, autoSocks;
  net_socket_layout_auto(vendor, cpus, &autoThreads, &autoSocks);
  int detected = nThreads == NET_SOCKET_LAYOUT_AUTO && nSocksPerThread == NET_SOCKET_LAYOUT_AUTO;
  if (nThreads == NET_SOCKET_LAYOUT_AUTO) nThreads = autoThreads;
  if (nSocksPerThread == NET_SOCKET_LAYOUT_AUTO) nSocksPerThread = autoSocks;
  if (detected && maxFlows > 0) { /* the control socket is one flow */
    int64_t data = maxFlows - 1;
    if (data == 0) nThreads = 0;
    else if (nThreads * nSocksPerThread > data) {
      if (nThreads > data) nThreads = data;
      nSocksPerThread = data / nThreads;
    }
  }
  if (nThreads < 0 || nThreads > NET_SOCKET_MAX_THREADS) {
    nThreads = nThreads < 0 ? 0 : NET_SOCKET_MAX_THREADS;
    l.clamped = 1;
  }
  if (nSocksPerThread < 0) {
    nSocksPerThread = 0;
    l.clamped = 1;
  }
  if (nThreads > 0 && nThreads * nSocksPerThread > NET_SOCKET_MAX_SOCKS) {
    nSocksPerThread = NET_SOCKET_MAX_SOCKS / nThreads;
    l.clamped = 1;
  }
  l.nSocks = (int)(nThreads * nSocksPerThread);
  l.nThreads = l.nSocks > 0 ? (int)nThreads : 0; /* threads without sockets would idle */
  return l;
}
