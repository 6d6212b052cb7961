#include "plan/plan_graph.h"

#include "base/err.h"
#include "comm/comm.h"
#include "exec/exec.h"
#include "proxy/proxy_replay.h"

ncclResult_t plan_graph_capture_ops(struct ncclComm* comm, plan_proxy_t* pp, void* stream) {
  proxy_replay_t* r;
  MK_CHECK(proxy_replay_take(&comm->dp.proxy, pp->ops, pp->nOps, &r));
  pp->nOps = 0;
  /* Kept before the host node exists: a failed capture is freed at destroy. */
  proxy_replay_keep(&comm->dp.graphOps, r);
  return comm->dp.exec.ops->host_call(comm->dp.exec.state, stream, proxy_replay_post, r);
}
