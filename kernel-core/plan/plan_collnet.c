/* Proxy ops of a CollNet item: one sub per channel that has a part of the
 * input, on its collnetSend connector, with the steps the executor moves
 * (device/common/sched_collnet.h) and the item's type and op, which the
 * proxy hands to the collnet plugin. */
#include "base/dtype.h"
#include "base/err.h"
#include "collnet/collnet.h"
#include "comm/comm.h"
#include "device/common/sched_collnet.h"
#include "device/common/shape.h"
#include "plan/plan_proxy.h"

/* The sub plan_proxy_add just made for conn. */
static mkcclProxySubOp_v1* plan_collnet_sub(plan_proxy_t* pp, const connector_t* conn) {
  for (int i = pp->nOps - 1; i >= 0; i--) {
    mkcclProxyOp_v1* a = &pp->ops[i]->args;
    if (a->nsubs > 0 && a->subs[a->nsubs - 1].conn == conn->conn && a->subs[a->nsubs - 1].channelId == conn->channelId)
      return &a->subs[a->nsubs - 1];
  }
  return NULL;
}

ncclResult_t plan_collnet_proxy(struct ncclComm* comm, const mk_work_t* w, plan_proxy_t* pp) {
  int64_t ts = (int64_t)host_type_size((ncclDataType_t)w->type);
  if (!comm->dp.collnet || w->channelLo + w->nChannels > collnet_comm_channels(comm))
    return MK_FAIL(ncclInternalError, "Rank %d: a CollNet item on channels %d..%d, beyond the collnet's %d", comm->rank,
                   w->channelLo, w->channelLo + w->nChannels - 1, collnet_comm_channels(comm));
  for (int c = w->channelLo; c < w->channelLo + w->nChannels; c++) {
    connector_t* conn = &comm->dp.ch.channels[c].collnetSend;
    int64_t off, len, nChunks;
    sched_collnet_part((int64_t)w->count, w->nChannels, c - w->channelLo, w->chunkSize / ts, mk_elem_align((int)ts),
                       &off, &len, &nChunks);
    if (nChunks == 0) continue;
    MK_CHECK(plan_proxy_add(pp, conn, (uint64_t)nChunks, w, 1, 1));
    mkcclProxySubOp_v1* sub = plan_collnet_sub(pp, conn);
    if (!sub) return MK_FAIL(ncclInternalError, "Rank %d: CollNet's proxy sub of channel %d is missing", comm->rank, c);
    collnet_sub_describe(sub, w->type, w->op);
  }
  return ncclSuccess;
}
