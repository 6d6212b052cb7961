/* One work item on one channel of the host executor: the ring and tree
 * collectives of device/common/coll_ring.h and coll_tree.h (shared with the
 * GPU executor) over the host primitives, the flat AllReduce, and
 * point-to-point. */
#include <string.h>

#include "base/err.h"
#include "channel/channel_tree.h"
#include "device/common/shape.h"
#include "host_exec.h"
#include "host_prims.h"
#include "base/dtype.h"
#include "host_wait.h"

#define MK_ALGO_FN static inline
#define MK_PRIMS_T host_prims_t
#define MK_PRIMS_CHUNK(p, prim, src, dst, nelem) (host_prims_chunk((p), (prim), (src), (dst), (nelem)) != ncclSuccess)
#define MK_PRIMS_BIND(p, ctx, recvPeers, nRecv, sendPeers, nSend) \
  host_coll_bind((p), (channel_t*)(ctx)->exec, (recvPeers), (nRecv), (sendPeers), (nSend))

static void host_coll_conn(host_conn_t* hc, connector_t* c) {
  hc->info = &c->info;
  hc->step = &c->step;
  hc->seen = &c->peerSeen;
  hc->proxyLane = (c->info.flags & MKCCL_CONN_PROXY) ? c->proxyLane : -1;
}

/* Point the prims at the connections this rank uses (only those, so step
 * counters stay in sync with the peers') and start a new operation on them. */
static void host_coll_attach(host_prims_t* p, connector_t** recv, int nRecv, connector_t** send, int nSend) {
  /* Only the first nRecv / nSend entries are ever read: nothing to clear
   * (a small collective's whole run is a few hundred ns; clearing both
   * arrays was a visible share of it). */
  p->nRecv = nRecv;
  p->nSend = nSend;
  for (int i = 0; i < nRecv; i++) host_coll_conn(&p->recv[i], recv[i]);
  for (int i = 0; i < nSend; i++) host_coll_conn(&p->send[i], send[i]);
  if (nRecv || nSend) p->shape.stepSize = (nRecv ? recv[0] : send[0])->info.stepSize[MKCCL_PROTO_SIMPLE];
  host_prims_begin(p);
}

static void host_coll_attach1(host_prims_t* p, connector_t* recv, connector_t* send) {
  host_coll_attach(p, &recv, recv != NULL, &send, send != NULL);
}

/* Collective connections of channel ch from / to the given peers. */
static int host_coll_bind(host_prims_t* p, channel_t* ch, const int* recvPeers, int nRecv, const int* sendPeers,
                          int nSend) {
  connector_t* recv[HOST_PRIMS_MAX_PEERS];
  connector_t* send[HOST_PRIMS_MAX_PEERS];
  if (nRecv > HOST_PRIMS_MAX_PEERS || nSend > HOST_PRIMS_MAX_PEERS) return 1;
  for (int i = 0; i < nRecv; i++) recv[i] = &ch->peers[recvPeers[i]].recv[MK_CONN_COLL];
  for (int i = 0; i < nSend; i++) send[i] = &ch->peers[sendPeers[i]].send[MK_CONN_COLL];
  host_coll_attach(p, recv, nRecv, send, nSend);
  return 0;
}

#include "device/common/coll_flat.h"
#include "device/common/coll_ring.h"
#include "device/common/coll_tree.h"

/* Why a run stopped: the abort flag (raised by the proxy thread or another
 * rank's wait, hence an atomic load) means a peer failed. */
static ncclResult_t host_coll_failure(const host_prims_t* p) {
  return __atomic_load_n(p->abortFlag, __ATOMIC_ACQUIRE) ? ncclRemoteError : ncclInternalError;
}

/* Ring AllGather and Broadcast in Simple move raw copies, which may go by
 * address (host_prims_chunk_ptr): slices come as PTR slots where the
 * previous rank's connection lets it post them, and go so where the next
 * rank reads this rank's buffer in place: shareable memory where it maps
 * ours (MKCCL_CONN_PTR_MAP), registered memory where it reads ours by CMA
 * (MKCCL_CONN_PTR_READ). */
static void host_coll_ring_ptr(host_prims_t* p, const mk_work_t* w, int nRanks) {
  const uint32_t reads = MKCCL_CONN_PTR_READ | MKCCL_CONN_PTR_MAP;
  int copies = (w->coll == MK_COLL_ALLGATHER || w->coll == MK_COLL_BROADCAST) && w->proto == MK_PROTO_SIMPLE;
  int recvPtr = copies && p->nRecv == 1 && (p->recv[0].info->flags & reads) && p->recv[0].info->ptrRead;
  uint32_t next = copies && p->nSend == 1 ? p->send[0].info->flags : 0;
  /* Not over a proxy's connection: there a PTR slot is the proxy's to send
   * from, which its collectives do not do. */
  int map = !!(next & MKCCL_CONN_PTR_MAP), cma = (next & MKCCL_CONN_PTR_READ) && !(next & MKCCL_CONN_PROXY);
  p->srcShared = (map && (w->flags & MK_WORK_SEND_HOSTMEM)) || (cma && (w->flags & MK_WORK_SEND_REG));
  p->dstShared = (map && (w->flags & MK_WORK_RECV_HOSTMEM)) || (cma && (w->flags & MK_WORK_RECV_REG));
  p->ptrSend = p->srcShared || p->dstShared;
  p->ptrPath = recvPtr || p->ptrSend;
  int64_t out = (int64_t)w->count * (int64_t)p->typeSize * (w->coll == MK_COLL_ALLGATHER ? nRanks : 1);
  p->ptrStream = (uint8_t)(recvPtr && host_store_single_stream(p->store, out));
}

static ncclResult_t host_coll_ring(channel_t* ch, const mk_work_t* w, host_prims_t* p, int nRanks) {
  mk_ring_ctx_t c;
  c.nRanks = nRanks;
  c.ringIx = ch->ring.index;
  c.ringRanks = ch->ring.userRanks;
  c.bid = ch->id - w->channelLo;
  c.ts = (int64_t)p->typeSize;
  c.align = mk_elem_align((int)p->typeSize);
  c.chunkElems = w->chunkSize / c.ts;
  int recvs, sends;
  coll_ring_uses(&c, w, &recvs, &sends);
  host_coll_attach1(p, recvs ? &ch->peers[ch->ring.prev].recv[MK_CONN_COLL] : NULL,
                    sends ? &ch->peers[ch->ring.next].send[MK_CONN_COLL] : NULL);
  host_coll_ring_ptr(p, w, nRanks);
  if (coll_ring_run(p, w, &c)) return host_coll_failure(p);
  if (p->ptrPosted) MK_CHECK(host_prims_send_drain(p));
  return ncclSuccess;
}

static ncclResult_t host_coll_tree(channel_t* ch, const mk_work_t* w, host_prims_t* p, int nRanks) {
  mk_tree_ctx_t c;
  channel_tree_t t;
  channel_tree_for(ch, nRanks, w->coll, w->root, &t);
  coll_tree_ctx_init(&c, t.up, t.down, ch->id - w->channelLo, w->chunkSize, (int64_t)p->typeSize, ch);
  if (coll_tree_run(p, w, &c)) return host_coll_failure(p);
  return ncclSuccess;
}

/* A flat AllReduce's rank count, checked once for both of its forms. */
static ncclResult_t host_coll_flat_ranks(int nRanks) {
  if (nRanks < 2 || nRanks > MK_FLAT_MAX_RANKS)
    return MK_FAIL(ncclInternalError, "host executor: flat AllReduce over %d ranks", nRanks);
  return ncclSuccess;
}

/* Flat in one step: bind p to the collective connections of every other
 * rank, in rank order both ways (kernel-core/channel: channel_connect_flat). */
static ncclResult_t host_coll_flat_bind(host_prims_t* p, channel_t* ch, int rank, int nRanks) {
  int peers[MK_FLAT_MAX_RANKS], n = 0;
  for (int r = 0; r < nRanks; r++)
    if (r != rank) peers[n++] = r;
  return host_coll_bind(p, ch, peers, n, peers, n) ? ncclInternalError : ncclSuccess;
}

/* The step itself on bound prims (host_prims_flat). */
static ncclResult_t host_coll_flat_step(host_prims_t* p, const mk_work_t* w, int rank) {
  ncclResult_t res = host_prims_flat(p, w->sendbuff, w->recvbuff, (int64_t)w->count, rank);
  if (res == ncclRemoteError) return host_coll_failure(p);
  return res;
}

/* Flat AllReduce: in one step, or direct when the input is longer than a
 * chunk (coll_flat.h). */
static ncclResult_t host_coll_flat(channel_t* ch, const mk_work_t* w, host_prims_t* p, int rank, int nRanks) {
  MK_CHECK(host_coll_flat_ranks(nRanks));
  if (!host_coll_flat_one_step(w)) {
    int64_t ts = (int64_t)p->typeSize;
    mk_flat_ctx_t c = {.rank = rank, .nRanks = nRanks, .bid = ch->id - w->channelLo, .ts = ts, .exec = ch};
    mk_flat_shape(&c.shape, (int64_t)w->count, nRanks, w->nChannels, w->chunkSize / ts, mk_elem_align((int)ts));
    if (coll_flat_direct(p, w, &c)) return host_coll_failure(p);
    return ncclSuccess;
  }
  MK_CHECK(host_coll_flat_bind(p, ch, rank, nRanks));
  return host_coll_flat_step(p, w, rank);
}

/* Send/Recv: this channel's part of each side, chunk by chunk: whichever
 * side can move goes (a send while slots are free, a receive once its data
 * is in), so sends run up to the connection's steps ahead of receives and
 * a ring of exchanges never waits on itself. When one side is done, the
 * other goes on with plain waits. (Senders that run ahead are safe on a net
 * comm the channels share: the net ABI matches messages by tag, so one that
 * comes early waits for its receive.) A registered send buffer over a
 * connection whose receiver reads peers' memory goes out in PTR mode
 * (host_prims_ptr.c), and the item ends once the receiver has read it. */
static ncclResult_t host_p2p(channel_t* ch, const mk_work_t* w, host_prims_t* base) {
  int bid = ch->id - w->channelLo;
  int64_t chunk = w->chunkSize, sendOff = 0, sendLen = 0, recvOff = 0, recvLen = 0;
  int sendChunks = 0, recvChunks = 0;
  host_prims_t sp = *base, rp = *base;
  sp.typeSize = rp.typeSize = 1; /* p2p moves bytes */
  sp.redop.type = rp.redop.type = ncclUint8;
  sp.redop.op = rp.redop.op = MK_OP_SUM;
  if (w->sendBytes >= 0) {
    coll_p2p_part(w->sendBytes, w->nChannels, bid, chunk, &sendOff, &sendLen, &sendChunks);
    host_coll_attach1(&sp, NULL, &ch->peers[w->sendPeer].send[MK_CONN_P2P]);
  }
  if (w->recvBytes >= 0) {
    coll_p2p_part(w->recvBytes, w->nChannels, bid, chunk, &recvOff, &recvLen, &recvChunks);
    host_coll_attach1(&rp, &ch->peers[w->recvPeer].recv[MK_CONN_P2P], NULL);
  }
  /* Shared p2p comms keep their ops in one lane; either side names it. */
  int lane = sendChunks && sp.send[0].proxyLane >= 0 ? sp.send[0].proxyLane
             : recvChunks                           ? rp.recv[0].proxyLane
                                                    : -1;
  uint32_t sendFlags = sendChunks ? sp.send[0].info->flags : 0;
  int sendPtr = ((w->flags & MK_WORK_SEND_REG) && (sendFlags & MKCCL_CONN_PTR_READ)) ||
                ((w->flags & MK_WORK_SEND_HOSTMEM) && (sendFlags & MKCCL_CONN_PTR_MAP));
  int recvAny = recvChunks && (rp.recv[0].info->flags & (MKCCL_CONN_PTR_READ | MKCCL_CONN_PTR_MAP));
  rp.ptrStream = (uint8_t)host_store_single_stream(base->store, w->recvBytes);
  uint32_t idle = 0;
  int64_t deadline = 0;
  for (int si = 0, ri = 0; si < sendChunks || ri < recvChunks;) {
    int moved = 0;
    if (si < sendChunks && (ri == recvChunks || host_prims_ready(&sp, MK_PRIM_SEND))) {
      int64_t off = (int64_t)si++ * chunk;
      const char* src = (const char*)w->sendbuff + sendOff + off;
      if (sendPtr) {
        MK_CHECK(host_prims_send_addr(&sp, src, coll_clamp(sendLen, off, chunk)));
        /* Posting an address costs nothing: post all the room allows, so
         * the receiver reads long runs. */
        while (si < sendChunks && host_prims_ready(&sp, MK_PRIM_SEND)) {
          off = (int64_t)si++ * chunk;
          MK_CHECK(host_prims_send_addr(&sp, (const char*)w->sendbuff + sendOff + off, coll_clamp(sendLen, off, chunk)));
        }
      } else
        MK_CHECK(host_prims_chunk(&sp, MK_PRIM_SEND, src, NULL, coll_clamp(sendLen, off, chunk)));
      moved = 1;
    }
    if (ri < recvChunks && (si == sendChunks || host_prims_ready(&rp, MK_PRIM_RECV))) {
      int64_t off = (int64_t)ri++ * chunk;
      char* dst = (char*)w->recvbuff + recvOff + off;
      int got = 1;
      if (recvAny)
        MK_CHECK(host_prims_recv_any(&rp, dst, chunk, recvLen - off, w->recvPeer, &got));
      else
        MK_CHECK(host_prims_chunk(&rp, MK_PRIM_RECV, NULL, dst, coll_clamp(recvLen, off, chunk)));
      ri += got - 1; /* a PTR read can take several chunks at once */
      moved = 1;
    }
    if (moved) {
      idle = 0;
      deadline = 0;
      continue;
    }
    int waited = host_wait_any_round(&idle, &deadline, base->abortFlag, lane);
    if (waited == HOST_WAIT_TIMEOUT) host_wait_timed_out(base->abortFlag, "a point-to-point peer's data or free slots");
    if (waited != HOST_WAIT_OK) return ncclRemoteError;
  }
  if (sendPtr) MK_CHECK(host_prims_send_drain(&sp));
  return ncclSuccess;
}

/* What an item sets in the prims besides their connections (the
 * connection arrays are filled by the attach, as far as they are used; the
 * rest is set field by field, no clearing of the whole). */
static void host_coll_prims_set(host_prims_t* p, const mk_work_t* w, volatile uint32_t* abortFlag,
                                host_store_t* store) {
  int chunkSteps, sliceSteps;
  mk_coll_shape(w->coll, w->algo, &chunkSteps, &sliceSteps);
  p->shape.chunkSteps = chunkSteps; /* stepSize is the attach's */
  p->shape.sliceSteps = sliceSteps;
  uint64_t scalar = (w->flags & MK_WORK_SCALAR_PTR) ? host_scalar_load((const void*)(uintptr_t)w->scalar, w->type)
                                                    : w->scalar;
  p->redop = (host_redop_t){.type = w->type, .op = w->op, .scalar = scalar};
  p->typeSize = host_type_size((ncclDataType_t)w->type);
  p->abortFlag = abortFlag;
  p->store = store;
  p->ptrPath = p->ptrSend = p->ptrPosted = p->ptrStream = 0;
}

int host_coll_flat_one_step(const mk_work_t* w) {
  return w->coll == MK_COLL_ALLREDUCE && w->algo == MK_ALGO_FLAT &&
         !mk_flat_direct((int64_t)w->count * (int64_t)host_type_size((ncclDataType_t)w->type), w->chunkSize);
}

ncclResult_t host_coll_flat_bound(channel_t* ch, const mk_work_t* w, int rank, int nRanks,
                                  volatile uint32_t* abortFlag, host_store_t* store, host_prims_t* bound) {
  host_coll_prims_set(bound, w, abortFlag, store);
  if (bound->nSend == 0) {
    /* First run: bind (FLAT's chunks are one step, so later runs need no
     * rounding of the step counters: host_prims_begin would leave them). */
    MK_CHECK(host_coll_flat_ranks(nRanks));
    MK_CHECK(host_coll_flat_bind(bound, ch, rank, nRanks));
  }
  return host_coll_flat_step(bound, w, rank);
}

ncclResult_t host_coll_run(channel_t* ch, const mk_work_t* w, int rank, int nRanks, volatile uint32_t* abortFlag,
                           host_store_t* store) {
  host_prims_t p;
  p.nRecv = p.nSend = 0;
  p.shape.stepSize = 0; /* the attach sets it where a connection is used */
  host_coll_prims_set(&p, w, abortFlag, store);
  if (w->coll == MK_COLL_SENDRECV) return host_p2p(ch, w, &p);
  if (w->coll >= MK_COLL_SENDRECV) return MK_FAIL(ncclInternalError, "host executor: unknown collective %d", w->coll);
  if (w->algo == MK_ALGO_TREE) return host_coll_tree(ch, w, &p, nRanks);
  if (w->algo == MK_ALGO_FLAT) return host_coll_flat(ch, w, &p, rank, nRanks);
  if (w->algo == MK_ALGO_COLLNET_DIRECT) {
    if (w->coll != MK_COLL_ALLREDUCE)
      return MK_FAIL(ncclInternalError, "host executor: CollNet runs AllReduce only, not collective %d", w->coll);
    return host_collnet_run(ch, w, &p);
  }
  return host_coll_ring(ch, w, &p, nRanks);
}
