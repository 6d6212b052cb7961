/* Point-to-point on host buffers. Sends and receives of a group run as
 * rounds: in round d a rank sends to rank+d and receives from rank-d, so
 * every pair meets in the same round on both sides and no cycle of waits
 * can form. Connections (connection index MK_CONN_P2P) are made on first
 * use, by both ends in the same group. */
#include <stdlib.h>
#include <string.h>

#include "api/mem_host.h"
#include "api/mem_reg.h"
#include "api/window.h"
#include "base/err.h"
#include "base/param.h"
#include "comm/comm.h"
#include "device/common/shape.h"
#include "device/common/p2p_part.h"
#include "exec/exec.h"
#include "base/dtype.h"
#include "dp/dp_net.h"
#include "plan/plan_profile.h"
#include "plan/plan_proxy.h"
#include "plan/plan_steps.h"
#include "transport/transport.h"

static int plan_p2p_channels(struct ncclComm* comm) { return comm->dp.par.p2pChannels; }

static size_t task_bytes(const task_t* t) { return t->count * host_type_size(t->type); }

/* The point-to-point connector a send or recv task uses on channel c. */
static connector_t* p2p_task_conn(struct ncclComm* comm, const task_t* t, int c) {
  channel_peer_t* p = &comm->dp.ch.channels[c].peers[t->peer];
  return t->kind == TASK_SEND ? &p->send[MK_CONN_P2P] : &p->recv[MK_CONN_P2P];
}

int plan_p2p_connected(struct ncclComm* comm, const task_list_t* tasks) {
  if (tasks->nP2p == 0) return 1;
  int nch = plan_p2p_channels(comm);
  for (task_t* t = tasks->head; t; t = t->next) {
    if (t->kind == TASK_COLL || t->peer == comm->rank) continue;
    for (int c = 0; c < nch; c++)
      if (!p2p_task_conn(comm, t, c)->connected) return 0;
  }
  return 1;
}

ncclResult_t plan_p2p_connect(struct ncclComm* comm, task_list_t* tasks) {
  if (tasks->nP2p == 0) return ncclSuccess;
  int nch = plan_p2p_channels(comm), n = 0;
  int cap = 2 * nch * comm->nRanks;
  transport_conn_req_t* reqs = NULL;
  char* seen = calloc((size_t)comm->nRanks * 2, 1);
  if (!seen) return MK_FAIL(ncclSystemError, "out of memory");
  for (task_t* t = tasks->head; t; t = t->next) {
    if (t->kind == TASK_COLL || t->peer == comm->rank) continue;
    int isSend = t->kind == TASK_SEND;
    if (seen[t->peer * 2 + isSend]) continue;
    seen[t->peer * 2 + isSend] = 1;
    for (int c = 0; c < nch; c++) {
      connector_t* conn = p2p_task_conn(comm, t, c);
      if (conn->connected) continue;
      if (!reqs && !(reqs = calloc((size_t)cap, sizeof(*reqs)))) {
        free(seen);
        return MK_FAIL(ncclSystemError, "out of memory");
      }
      reqs[n++] = (transport_conn_req_t){conn, isSend, t->peer, c, MK_CONN_P2P};
    }
  }
  free(seen);
  if (n == 0) return ncclSuccess;
  ncclResult_t res = dp_net_p2p_begin(comm);
  if (res == ncclSuccess) {
    res = transport_connect(comm, reqs, n);
    ncclResult_t back = dp_net_p2p_end(comm);
    if (res == ncclSuccess) res = back;
  }
  free(reqs);
  return res;
}

/* The next queued task of `kind` with `peer` after `from` (NULL: from the head). */
static task_t* next_task(task_list_t* tasks, task_t* from, task_kind_t kind, int peer) {
  for (task_t* t = from ? from->next : tasks->head; t; t = t->next)
    if (t->kind == kind && t->peer == peer) return t;
  return NULL;
}

/* Steps a channel moves for its part of `bytes` (plan/plan_steps.h). */
static uint64_t p2p_channel_steps(int64_t bytes, int nch, int bid, int64_t chunk) {
  return plan_p2p_conn_steps(bytes, nch, bid, chunk);
}
ncclResult_t plan_p2p(struct ncclComm* comm, task_list_t* tasks, mk_work_t* works, int* nWorks,
                      plan_proxy_t* pp) {
  if (tasks->nP2p == 0) {
    *nWorks = 0;
    return ncclSuccess;
  }
  int N = comm->nRanks, me = comm->rank, nch = plan_p2p_channels(comm), n = 0;
  int64_t chunk = comm->dp.ch.buffSize / MKCCL_STEPS; /* p2p chunks are one step */
  for (int d = 0; d < N; d++) {
    int sendPeer = (me + d) % N, recvPeer = (me - d + N) % N;
    task_t *s = next_task(tasks, NULL, TASK_SEND, sendPeer), *r = next_task(tasks, NULL, TASK_RECV, recvPeer);
    while (s || r) {
      if (d == 0 && (!s || !r || task_bytes(s) != task_bytes(r)))
        return MK_FAIL(ncclInvalidUsage, "Rank %d: send to self and recv from self do not match", me);
      if (d == 0) { /* to myself: the executor's copy (on a GPU the stream's copy engine, as a one-rank collective) */
        if (task_bytes(s) && s->sendbuff != r->recvbuff)
          MK_CHECK(comm->dp.exec.ops->copy(comm->dp.exec.state, r->recvbuff, s->sendbuff, task_bytes(s), s->stream));
      } else {
        mk_work_t* w = &works[n++];
        memset(w, 0, sizeof(*w));
        w->coll = MK_COLL_SENDRECV;
        w->proto = MK_PROTO_SIMPLE;
        w->type = ncclUint8;
        w->opCount = comm->dp.opCount++;
        w->channelLo = 0;
        w->nChannels = (uint8_t)nch;
        w->chunkSize = (int32_t)chunk;
        w->sendPeer = sendPeer;
        w->recvPeer = recvPeer;
        w->sendBytes = s ? (int64_t)task_bytes(s) : -1;
        w->recvBytes = r ? (int64_t)task_bytes(r) : -1;
        w->sendbuff = s ? s->sendbuff : NULL;
        w->recvbuff = r ? r->recvbuff : NULL;
        /* Registered send buffers go out by address where the connection
         * reads them (net: the proxy sends from them; on GPU ranks with
         * GPUDirect RDMA); the executor checks the connection. */
        if (s && w->sendBytes > 0 && mem_reg_covers(comm, s->sendbuff, (size_t)w->sendBytes))
          w->flags |= MK_WORK_SEND_REG;
        if (s && comm->cudaDev < 0 && w->sendBytes > 0 && mem_host_covers(s->sendbuff, (size_t)w->sendBytes))
          w->flags |= MK_WORK_SEND_HOSTMEM;
        /* A send buffer in a window the receiving GPU maps: where it sees
         * it, for P2P to another process (the receiver reads it there). */
        uint64_t peerAddr;
        if (s && comm->cudaDev >= 0 && w->sendBytes > 0 &&
            api_window_peer_addr(comm, s->sendbuff, (size_t)w->sendBytes, sendPeer, &peerAddr)) {
          w->flags |= MK_WORK_SEND_PEER;
          w->symmSend = (int64_t)(peerAddr - (uint64_t)(uintptr_t)s->sendbuff);
          if (!comm->dp.sendPeerSaid++)
            MK_INFO(NCCL_P2P, "Rank %d: Send to rank %d from a window buffer: posted at the address rank %d maps it at "
                    "(taken where the connection's receiver reads its own addresses: P2P to another process)", me,
                    sendPeer, sendPeer);
        }
        /* A registered receive buffer: each channel's part goes to the
         * proxy, which may receive into it in place. */
        int recvReg = r && w->recvBytes > 0 && mem_reg_covers(comm, r->recvbuff, (size_t)w->recvBytes);
        plan_profile_p2p_start(comm, pp->profGroup, s, r, w);
        for (int c = 0; c < nch; c++) {
          channel_peer_t* sp = &comm->dp.ch.channels[c].peers[sendPeer];
          channel_peer_t* rp = &comm->dp.ch.channels[c].peers[recvPeer];
          if (s) MK_CHECK(plan_proxy_add(pp, &sp->send[MK_CONN_P2P], p2p_channel_steps(w->sendBytes, nch, c, chunk), w, 1, 1));
          uint64_t recvSteps = r ? p2p_channel_steps(w->recvBytes, nch, c, chunk) : 0;
          if (r && recvReg) {
            int64_t off, len;
            int chunks;
            coll_p2p_part(w->recvBytes, nch, c, chunk, &off, &len, &chunks);
            MK_CHECK(plan_proxy_add_user(pp, &rp->recv[MK_CONN_P2P], recvSteps, w, (char*)r->recvbuff + off, len));
          } else if (r) {
            MK_CHECK(plan_proxy_add(pp, &rp->recv[MK_CONN_P2P], recvSteps, w, 1, 1));
          }
        }
      }
      s = s ? next_task(tasks, s, TASK_SEND, sendPeer) : NULL;
      r = r ? next_task(tasks, r, TASK_RECV, recvPeer) : NULL;
    }
  }
  *nWorks = n;
  return ncclSuccess;
}
