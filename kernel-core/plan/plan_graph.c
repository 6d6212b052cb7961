#include "plan/plan_graph.h"

#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "comm/comm.h"
#include "exec/exec.h"

struct plan_graph_ops {
  plan_graph_ops_t* next;
  proxy_client_t* client;
  int nOps;
  proxy_op_t ops[]; /* templates: as planned, never posted themselves */
};

/* Runs on a CUDA thread: no CUDA calls, no errors to return. Ops that cannot
 * be allocated fail the communicator (abort flag), so the kernel waiting for
 * them ends with an error instead of hanging. */
void plan_graph_replay(void* arg) {
  plan_graph_ops_t* g = arg;
  for (int i = 0; i < g->nOps; i++) {
    proxy_op_t* op;
    if (proxy_op_alloc(&op) != ncclSuccess) {
      proxy_client_fail(g->client, ncclSystemError);
      MK_WARN("Rank %d: graph replay: out of memory for proxy op %d of %d; communicator aborted", g->client->rank,
              i, g->nOps);
      return;
    }
    op->progress = g->ops[i].progress;
    op->tctx = g->ops[i].tctx;
    op->lane = g->ops[i].lane;
    op->args = g->ops[i].args;
    proxy_op_post(g->client, op);
  }
}

ncclResult_t plan_graph_ops_take(proxy_client_t* client, plan_proxy_t* pp, plan_graph_ops_t** out) {
  plan_graph_ops_t* g = calloc(1, sizeof(*g) + (size_t)pp->nOps * sizeof(proxy_op_t));
  if (!g) return MK_FAIL(ncclSystemError, "out of memory keeping %d proxy ops of a captured launch", pp->nOps);
  g->client = client;
  g->nOps = pp->nOps;
  for (int i = 0; i < pp->nOps; i++) {
    g->ops[i] = *pp->ops[i];
    proxy_op_free(pp->ops[i]);
  }
  pp->nOps = 0;
  *out = g;
  return ncclSuccess;
}

ncclResult_t plan_graph_capture_ops(struct ncclComm* comm, plan_proxy_t* pp, void* stream) {
  plan_graph_ops_t* g;
  MK_CHECK(plan_graph_ops_take(&comm->dp.proxy, pp, &g));
  /* Kept before the host node exists: a failed capture is freed at destroy. */
  g->next = comm->dp.graphOps;
  comm->dp.graphOps = g;
  return comm->dp.exec.ops->host_call(comm->dp.exec.state, stream, plan_graph_replay, g);
}

void plan_graph_free_all(plan_graph_ops_t** list) {
  while (*list) {
    plan_graph_ops_t* g = *list;
    *list = g->next;
    free(g);
  }
}
