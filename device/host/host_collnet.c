/* CollNet AllReduce on one channel of the host executor: this channel's
 * part of the input goes chunk by chunk to the collnet connection
 * (collnetSend), and each chunk's result comes back on collnetRecv, where
 * the proxy publishes what the collnet plugin reduced
 * (kernel-core/collnet). Sends run ahead of receives as far as the slots
 * allow, so the plugin has up to MKCCL_STEPS requests to work on. */
#include "base/err.h"
#include "device/common/p2p_part.h"
#include "device/common/sched_collnet.h"
#include "device/common/sched_ring.h"
#include "device/common/shape.h"
#include "host_exec.h"
#include "host_prims.h"
#include "host_wait.h"

static void host_collnet_attach(host_prims_t* p, connector_t* c, int isSend) {
  host_conn_t* hc = isSend ? &p->send[0] : &p->recv[0];
  hc->info = &c->info;
  hc->step = &c->step;
  hc->seen = &c->peerSeen;
  hc->proxyLane = c->proxyLane;
  p->nSend = isSend;
  p->nRecv = !isSend;
  p->shape.stepSize = c->info.stepSize[MKCCL_PROTO_SIMPLE];
  host_prims_begin(p);
}

ncclResult_t host_collnet_run(channel_t* ch, const mk_work_t* w, host_prims_t* base) {
  if (!ch->collnetSend.connected || !ch->collnetRecv.connected)
    return MK_FAIL(ncclInternalError, "host executor: a CollNet item on channel %d, which has no collnet connection",
                   ch->id);
  int64_t ts = (int64_t)base->typeSize, chunkElems = w->chunkSize / ts, off, len, nChunks;
  sched_collnet_part((int64_t)w->count, w->nChannels, ch->id - w->channelLo, chunkElems, mk_elem_align((int)ts), &off,
                     &len, &nChunks);
  host_prims_t sp = *base, rp = *base;
  host_collnet_attach(&sp, &ch->collnetSend, 1);
  host_collnet_attach(&rp, &ch->collnetRecv, 0);
  const char* src = (const char*)w->sendbuff + off * ts;
  char* dst = (char*)w->recvbuff + off * ts;
  uint32_t idle = 0;
  int64_t deadline = 0;
  for (int64_t si = 0, ri = 0; ri < nChunks;) {
    int moved = 0;
    /* A send may wait when no receive is due; a receive only once sent. */
    if (si < nChunks && (si == ri || host_prims_ready(&sp, MK_PRIM_SEND))) {
      int64_t o = si++ * chunkElems;
      MK_CHECK(host_prims_chunk(&sp, MK_PRIM_SEND, src + o * ts, NULL, coll_clamp(len, o, chunkElems)));
      moved = 1;
    }
    if (ri < si && (si == nChunks || host_prims_ready(&rp, MK_PRIM_RECV))) {
      int64_t o = ri++ * chunkElems;
      MK_CHECK(host_prims_chunk(&rp, MK_PRIM_RECV, NULL, dst + o * ts, coll_clamp(len, o, chunkElems)));
      moved = 1;
    }
    if (moved) {
      idle = 0;
      deadline = 0;
      continue;
    }
    int waited = host_wait_any_round(&idle, &deadline, base->abortFlag, ch->collnetSend.proxyLane);
    if (waited == HOST_WAIT_TIMEOUT) host_wait_timed_out(base->abortFlag, "the collnet's results");
    if (waited != HOST_WAIT_OK) return ncclRemoteError;
  }
  return ncclSuccess;
}
