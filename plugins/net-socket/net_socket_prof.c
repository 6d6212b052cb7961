/* NetPlugin profiler events (net_socket_prof.h), with NCCL's socket
 * descriptor (version 1). */
#include "net_socket_prof.h"

#include <stdatomic.h>

#include "profiler/nccl_profiler.h"
#include "profiler/nccl_profiler_net.h"

/* One per process, as the host's callback is. */
static ncclProfilerCallback_t _Atomic net_socket_prof_cb;

void net_socket_prof_set(ncclProfilerCallback_t callback) {
  if (callback) atomic_store_explicit(&net_socket_prof_cb, callback, memory_order_relaxed);
}

static ncclProfilerNetSockDescr_v1_t net_socket_prof_descr(const net_socket_request_t* r, int i) {
  ncclProfilerNetSockDescr_v1_t d;
  d.type = ncclProfileSocket;
  d.sock.fd = r->comm->ctrlFd;
  d.sock.op = r->comm->isSend ? 0 : 1;
  d.sock.length = r->comm->isSend ? r->subs[i].size : r->subs[i].received;
  return d;
}

void net_socket_prof_start(net_socket_request_t* r, void* const* phandles) {
  ncclProfilerCallback_t cb = atomic_load_explicit(&net_socket_prof_cb, memory_order_relaxed);
  for (int i = 0; i < r->n; i++) {
    r->pEvents[i] = NULL;
    if (!cb || !phandles || !phandles[i]) continue;
    ncclProfilerNetSockDescr_v1_t d = net_socket_prof_descr(r, i);
    cb(&r->pEvents[i], NCCL_PROFILER_NET_EVENT_START, phandles[i], NCCL_PROFILER_NET_TYPE_SOCK | NCCL_PROFILER_NET_SOCKET_VER,
       &d);
  }
}

void net_socket_prof_stop(net_socket_request_t* r) {
  ncclProfilerCallback_t cb = atomic_load_explicit(&net_socket_prof_cb, memory_order_relaxed);
  for (int i = 0; i < r->n; i++) {
    if (!r->pEvents[i]) continue;
    ncclProfilerNetSockDescr_v1_t d = net_socket_prof_descr(r, i);
    if (cb) cb(&r->pEvents[i], r->comm->isSend ? NCCL_PROFILER_NET_EVENT_STOP : NCCL_PROFILER_NET_EVENT_UPDATE_AND_STOP,
               NULL, 0, &d);
    r->pEvents[i] = NULL;
  }
}
