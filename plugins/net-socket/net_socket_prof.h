/* NetPlugin profiler events (net ABI v10+): the host hands a callback to
 * init and, per isend/irecv, a parent handle per buffer. A request reports
 * one event per buffer, started when it is posted and stopped when test()
 * finds it complete (a receive with the bytes it got). Without a callback
 * or a parent handle nothing is reported. */
#ifndef NET_SOCKET_PROF_H
#define NET_SOCKET_PROF_H

#include "net_socket_comm.h"

void net_socket_prof_set(ncclProfilerCallback_t callback);
/* r was just posted with r->n buffers; phandles[i] may be NULL. */
void net_socket_prof_start(net_socket_request_t* r, void* const* phandles);
/* r is complete. */
void net_socket_prof_stop(net_socket_request_t* r);

#endif
