/* Proxy ops of launches captured into a CUDA graph: kept as templates by the
 * communicator and posted afresh before the kernel at every replay
 * (proxy/proxy_replay.h). */
#ifndef MKCCL_PLAN_GRAPH_H
#define MKCCL_PLAN_GRAPH_H

#include "plan/plan_proxy.h"

struct ncclComm;

/* Takes the ops of `pp` (pp is left empty) into templates kept by the
 * communicator, and posts them from the stream (captured: at every replay). */
ncclResult_t plan_graph_capture_ops(struct ncclComm* comm, plan_proxy_t* pp, void* stream);

#endif
