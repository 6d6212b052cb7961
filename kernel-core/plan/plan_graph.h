/* Proxy ops of launches captured into a CUDA graph. A replay runs the
 * kernel again, so the proxy must be told again: the captured launch keeps
 * its ops as templates, and a host node placed before the kernel posts a
 * fresh copy of them at every replay. The templates stay until the
 * communicator is destroyed (a graph must not be replayed after that). */
#ifndef MKCCL_PLAN_GRAPH_H
#define MKCCL_PLAN_GRAPH_H

#include "plan/plan_proxy.h"

struct ncclComm;
typedef struct plan_graph_ops plan_graph_ops_t;

/* Takes the ops of `pp` (pp is left empty) into templates kept by the
 * communicator, and posts them from the stream (captured: at every replay). */
ncclResult_t plan_graph_capture_ops(struct ncclComm* comm, plan_proxy_t* pp, void* stream);
/* The parts of it, for tests: the ops of `pp` as templates for `client`
 * (pp left empty); one fresh copy of each posted to the proxy (the host
 * node's body, on a CUDA thread at every replay). */
ncclResult_t plan_graph_ops_take(proxy_client_t* client, plan_proxy_t* pp, plan_graph_ops_t** out);
void plan_graph_replay(void* ops);
/* Frees a list of templates (at destroy, once the proxy is detached). */
void plan_graph_free_all(plan_graph_ops_t** list);

#endif
