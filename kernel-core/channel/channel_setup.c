/* Channels of a communicator: the ring order (ranks of one host next to each
 * other, so a ring crosses each host boundary once: intra-host hops over
 * shm/p2p, inter-host hops over the net), the ring connections, and the
 * trees over the same order (device/common/sched_tree.h), connected the
 * first time a collective runs on a tree: AllReduce's once, Broadcast's and
 * Reduce's once per root (rotated trees, channel_tree.h). */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"
#include "base/param.h"
#include "channel/channel_setup.h"
#include "channel/channel_tree.h"
#include "comm/comm.h"
#include "device/common/sched_tree.h"
#include "transport/transport.h"

/* Hosts in order of their first rank, ranks ascending within a host. */
static ncclResult_t channel_ring_order(struct ncclComm* comm, int* order) {
  int n = comm->nRanks, k = 0;
  char* placed = calloc((size_t)n, 1);
  if (!placed) return MK_FAIL(ncclSystemError, "channels: out of memory");
  for (int r = 0; r < n; r++) {
    if (placed[r]) continue;
    for (int s = r; s < n; s++) {
      if (!placed[s] && comm->dp.tr.peers[s].hostHash == comm->dp.tr.peers[r].hostHash) {
        order[k++] = s;
        placed[s] = 1;
      }
    }
  }
  free(placed);
  return ncclSuccess;
}

ncclResult_t channel_setup(struct ncclComm* comm, int nChannels) {
  dp_state_t* dp = &comm->dp;
  int n = comm->nRanks;
  dp->ch.ringOrder = calloc((size_t)n, sizeof(int));
  if (!dp->ch.ringOrder) return MK_FAIL(ncclSystemError, "channels: out of memory");
  MK_CHECK(channel_ring_order(comm, dp->ch.ringOrder));
  dp->ch.rootTreesConnected = calloc((size_t)n, 1);
  if (!dp->ch.rootTreesConnected) return MK_FAIL(ncclSystemError, "channels: out of memory");
  int index = 0;
  for (int i = 0; i < n; i++)
    if (dp->ch.ringOrder[i] == comm->rank) index = i;
  for (int c = 0; c < nChannels; c++) {
    channel_t* ch = &dp->ch.channels[c];
    memset(ch, 0, sizeof(*ch));
    ch->id = c;
    ch->ring.userRanks = dp->ch.ringOrder;
    ch->ring.index = index;
    ch->ring.prev = dp->ch.ringOrder[(index + n - 1) % n];
    ch->ring.next = dp->ch.ringOrder[(index + 1) % n];
    ch->peers = calloc((size_t)n, sizeof(channel_peer_t));
    if (!ch->peers) return MK_FAIL(ncclSystemError, "channels: out of memory");
  }
  dp->ch.nChannels = nChannels;
  return ncclSuccess;
}

ncclResult_t channel_connect_rings(struct ncclComm* comm) {
  dp_state_t* dp = &comm->dp;
  if (comm->nRanks == 1) return ncclSuccess;
  transport_conn_req_t* reqs = calloc((size_t)dp->ch.nChannels * 2, sizeof(*reqs));
  if (!reqs) return MK_FAIL(ncclSystemError, "channels: out of memory");
  int n = 0;
  for (int c = 0; c < dp->ch.nChannels; c++) {
    channel_t* ch = &dp->ch.channels[c];
    reqs[n++] = (transport_conn_req_t){&ch->peers[ch->ring.prev].recv[MK_CONN_COLL], 0, ch->ring.prev, c, MK_CONN_COLL};
    reqs[n++] = (transport_conn_req_t){&ch->peers[ch->ring.next].send[MK_CONN_COLL], 1, ch->ring.next, c, MK_CONN_COLL};
  }
  ncclResult_t res = transport_connect(comm, reqs, n);
  free(reqs);
  return res;
}

/* Both directions to a tree (or flat) neighbour, unless a ring already joined them. */
static int channel_tree_reqs(channel_t* ch, int peer, transport_conn_req_t* reqs) {
  int n = 0;
  if (peer < 0) return 0;
  connector_t* recv = &ch->peers[peer].recv[MK_CONN_COLL];
  connector_t* send = &ch->peers[peer].send[MK_CONN_COLL];
  if (!recv->connected) reqs[n++] = (transport_conn_req_t){recv, 0, peer, ch->id, MK_CONN_COLL};
  if (!send->connected) reqs[n++] = (transport_conn_req_t){send, 1, peer, ch->id, MK_CONN_COLL};
  return n;
}

/* NCCL's form: "Trees [c] down0/down1/down2->rank->up". */
static void channel_tree_log(struct ncclComm* comm) {
  for (int c = 0; c < comm->dp.ch.nChannels; c++) {
    channel_tree_t t;
    channel_tree_for(&comm->dp.ch.channels[c], comm->nRanks, MK_COLL_ALLREDUCE, 0, &t);
    MK_INFO(NCCL_INIT, "Trees [%d] %d/%d/%d->%d->%d", c, t.down[0], t.down[1], t.down[2], comm->rank, t.up);
  }
}

/* Both ways to the parent and each child of every channel's tree of
 * collective `coll` rooted at `root`, those not connected yet. */
static ncclResult_t channel_connect_tree_of(struct ncclComm* comm, int coll, int root) {
  dp_state_t* dp = &comm->dp;
  transport_conn_req_t* reqs = calloc((size_t)dp->ch.nChannels * 2 * (1 + MK_TREE_ARITY), sizeof(*reqs));
  if (!reqs) return MK_FAIL(ncclSystemError, "channels: out of memory");
  int n = 0;
  for (int c = 0; c < dp->ch.nChannels; c++) {
    channel_t* ch = &dp->ch.channels[c];
    channel_tree_t t;
    channel_tree_for(ch, comm->nRanks, coll, root, &t);
    n += channel_tree_reqs(ch, t.up, reqs + n);
    for (int d = 0; d < MK_TREE_ARITY; d++) n += channel_tree_reqs(ch, t.down[d], reqs + n);
  }
  ncclResult_t res = transport_connect(comm, reqs, n);
  free(reqs);
  return res;
}

static ncclResult_t channel_connect_trees(struct ncclComm* comm) {
  dp_state_t* dp = &comm->dp;
  MK_CHECK(channel_connect_tree_of(comm, MK_COLL_ALLREDUCE, 0));
  dp->ch.treesConnected = 1;
  channel_tree_log(comm);
  return ncclSuccess;
}

static ncclResult_t channel_connect_rooted_trees(struct ncclComm* comm, int root) {
  dp_state_t* dp = &comm->dp;
  MK_CHECK(channel_connect_tree_of(comm, MK_COLL_BROADCAST, root)); /* Reduce's tree is the same */
  dp->ch.rootTreesConnected[root] = 1;
  for (int c = 0; c < dp->ch.nChannels; c++) {
    channel_tree_t t;
    channel_tree_for(&dp->ch.channels[c], comm->nRanks, MK_COLL_BROADCAST, root, &t);
    MK_INFO(NCCL_INIT, "Trees rooted at %d [%d] %d/%d/%d->%d->%d", root, c, t.down[0], t.down[1], t.down[2],
            comm->rank, t.up);
  }
  return ncclSuccess;
}

static ncclResult_t channel_connect_flat(struct ncclComm* comm) {
  dp_state_t* dp = &comm->dp;
  transport_conn_req_t* reqs = calloc((size_t)comm->nRanks * 2, sizeof(*reqs));
  if (!reqs) return MK_FAIL(ncclSystemError, "channels: out of memory");
  int n = 0;
  for (int r = 0; r < comm->nRanks; r++)
    if (r != comm->rank) n += channel_tree_reqs(&dp->ch.channels[0], r, reqs + n);
  ncclResult_t res = transport_connect(comm, reqs, n);
  free(reqs);
  if (res != ncclSuccess) return res;
  dp->ch.flatConnected = 1;
  dp->ch.flatNoProxy = 1;
  int ll = comm->cudaDev >= 0;
  for (int r = 0; r < comm->nRanks; r++) {
    if (r == comm->rank) continue;
    const channel_peer_t* p = &dp->ch.channels[0].peers[r];
    if (p->send[MK_CONN_COLL].needsProxy || p->recv[MK_CONN_COLL].needsProxy) dp->ch.flatNoProxy = 0;
    if (!p->send[MK_CONN_COLL].info.buffs[MKCCL_PROTO_LL] || !p->recv[MK_CONN_COLL].info.buffs[MKCCL_PROTO_LL]) ll = 0;
  }
  /* GPU FLAT runs in LL: only where every rank has lines to and from every
   * peer (the transports that offer them give them at setup), which all must
   * agree on. */
  return comm->cudaDev >= 0 ? comm_all_agree(comm, ll, &dp->ch.flatLL, "whether FLAT connections have LL lines")
                            : ncclSuccess;
}

int channel_algo_connected(const struct ncclComm* comm, int algo, int coll, int root) {
  const dp_state_t* dp = &comm->dp;
  if (comm->nRanks == 1) return 1;
  if (algo == MK_ALGO_FLAT) return dp->ch.flatConnected;
  if (algo != MK_ALGO_TREE) return 1; /* rings: at init */
  if (!sched_tree_is_rooted(coll)) return dp->ch.treesConnected;
  return root < 0 || root >= comm->nRanks || dp->ch.rootTreesConnected[root];
}

ncclResult_t channel_connect_algo(struct ncclComm* comm, int algo, int coll, int root) {
  if (channel_algo_connected(comm, algo, coll, root)) return ncclSuccess;
  if (algo == MK_ALGO_FLAT) return channel_connect_flat(comm);
  return sched_tree_is_rooted(coll) ? channel_connect_rooted_trees(comm, root) : channel_connect_trees(comm);
}

void channel_free_all(struct ncclComm* comm) {
  dp_state_t* dp = &comm->dp;
  for (int c = dp->ch.nChannels - 1; c >= 0; c--) {
    channel_t* ch = &dp->ch.channels[c];
    if (!ch->peers) continue;
    for (int p = 0; p < comm->nRanks; p++)
      for (int i = MK_NUM_CONNS - 1; i >= 0; i--) {
        transport_conn_free(&ch->peers[p].recv[i]);
        transport_conn_free(&ch->peers[p].send[i]);
      }
    free(ch->peers);
    ch->peers = NULL;
  }
  dp->ch.nChannels = 0;
  dp->ch.treesConnected = 0;
  dp->ch.flatConnected = 0;
  dp->ch.flatLL = 0;
  dp->ch.flatNoProxy = 0;
  free(dp->ch.rootTreesConnected);
  dp->ch.rootTreesConnected = NULL;
  free(dp->ch.ringOrder);
  dp->ch.ringOrder = NULL;
}
