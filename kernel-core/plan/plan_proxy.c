#include "plan/plan_proxy.h"

#include <string.h>

#include "base/err.h"
#include "comm/comm.h"
#include "profile/profile.h"
#include "transport/transport.h"

void plan_proxy_init(plan_proxy_t* pp, struct ncclComm* comm) {
  pp->comm = comm;
  pp->nOps = 0;
  pp->profGroup = NULL;
  pp->captured = 0;
}

/* The op collecting subs for (work, transport, side, proxy lane), created on demand. */
static ncclResult_t plan_proxy_op_for(plan_proxy_t* pp, connector_t* conn, const mk_work_t* w, int chunkSteps,
                                      int sliceSteps, proxy_op_t** out) {
  const mkcclTransportSide_v1* side = conn->isSend ? &conn->transport->t->send : &conn->transport->t->recv;
  for (int i = pp->nOps - 1; i >= 0; i--) {
    proxy_op_t* op = pp->ops[i];
    if (op->args.opCount != w->opCount) break;
    if (op->progress == side->proxyProgress && op->tctx == conn->transport->tctx && op->lane == conn->proxyLane &&
        op->args.nsubs < MKCCL_PROXY_MAX_SUBS) {
      *out = op;
      return ncclSuccess;
    }
  }
  if (pp->nOps == PLAN_PROXY_MAX_OPS)
    return MK_FAIL(ncclInternalError, "too many proxy ops in one launch (%d)", PLAN_PROXY_MAX_OPS);
  proxy_op_t* op;
  MK_CHECK(proxy_op_alloc(&op));
  op->progress = side->proxyProgress;
  op->tctx = conn->transport->tctx;
  op->lane = conn->proxyLane;
  op->args.state = MKCCL_PROXY_OP_READY;
  op->args.protocol = MKCCL_PROTO_SIMPLE;
  op->args.chunkSteps = chunkSteps;
  op->args.sliceSteps = sliceSteps;
  op->args.chunkSize = w->chunkSize;
  op->args.opCount = w->opCount;
  op->args.pattern = w->coll;
  pp->ops[pp->nOps++] = op;
  *out = op;
  return ncclSuccess;
}

static ncclResult_t plan_proxy_add_sub(plan_proxy_t* pp, connector_t* conn, uint64_t steps, const mk_work_t* w,
                                       int chunkSteps, int sliceSteps, void* userBuff, int64_t nbytes) {
  if (steps == 0 || !conn->needsProxy) return ncclSuccess;
  const mkcclTransportSide_v1* side = conn->isSend ? &conn->transport->t->send : &conn->transport->t->recv;
  if (!side->proxyProgress)
    return MK_FAIL(ncclInternalError, "transport %s asks for a proxy but has no proxyProgress",
                   conn->transport->t->name);
  proxy_op_t* op;
  MK_CHECK(plan_proxy_op_for(pp, conn, w, chunkSteps, sliceSteps, &op));
  mkcclProxySubOp_v1* sub = &op->args.subs[op->args.nsubs++];
  memset(sub, 0, sizeof(*sub));
  sub->conn = conn->conn;
  sub->channelId = conn->channelId;
  sub->peer = conn->peer;
  sub->nsteps = steps;
  sub->nbytes = userBuff ? nbytes : -1;
  sub->userBuff = userBuff;
  sub->groupSize = 1;
  /* The proxy reports ProxyOp/ProxyStep events of this sub under the item's Coll/P2p event. */
  if (pp->captured) return ncclSuccess;
  return profile_proxy_sub_attach(&pp->comm->profile, w->profiler[conn->isSend ? 1 : 0], conn->isSend, sub);
}

ncclResult_t plan_proxy_add(plan_proxy_t* pp, connector_t* conn, uint64_t steps, const mk_work_t* w, int chunkSteps,
                            int sliceSteps) {
  return plan_proxy_add_sub(pp, conn, steps, w, chunkSteps, sliceSteps, NULL, -1);
}

ncclResult_t plan_proxy_add_user(plan_proxy_t* pp, connector_t* conn, uint64_t steps, const mk_work_t* w,
                                 void* userBuff, int64_t nbytes) {
  return plan_proxy_add_sub(pp, conn, steps, w, 1, 1, userBuff, nbytes);
}

void plan_proxy_post(plan_proxy_t* pp) {
  for (int i = 0; i < pp->nOps; i++) proxy_op_post(&pp->comm->dp.proxy, pp->ops[i]);
  pp->nOps = 0;
}

void plan_proxy_discard(plan_proxy_t* pp) {
  for (int i = 0; i < pp->nOps; i++) {
    if (profile_proxy_tracked(&pp->ops[i]->args)) profile_proxy_finish(&pp->ops[i]->args);
    proxy_op_free(pp->ops[i]);
  }
  pp->nOps = 0;
}
