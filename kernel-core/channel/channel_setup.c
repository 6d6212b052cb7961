/* Channels of a communicator: the ring order (ranks of one host next to each
 * other, so a ring crosses each host boundary once: intra-host hops over
 * shm/p2p, inter-host hops over the net) and the ring connections. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/param.h"
#include "channel/channel_setup.h"
#include "comm/comm.h"
#include "transport/transport.h"

/* Hosts in order of their first rank, ranks ascending within a host. */
static ncclResult_t channel_ring_order(struct ncclComm* comm, int* order) {
  int n = comm->nRanks, k = 0;
  char* placed = calloc((size_t)n, 1);
  if (!placed) return MK_FAIL(ncclSystemError, "channels: out of memory");
  for (int r = 0; r < n; r++) {
    if (placed[r]) continue;
    for (int s = r; s < n; s++) {
      if (!placed[s] && comm->dp.peers[s].hostHash == comm->dp.peers[r].hostHash) {
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
  dp->ringOrder = calloc((size_t)n, sizeof(int));
  if (!dp->ringOrder) return MK_FAIL(ncclSystemError, "channels: out of memory");
  MK_CHECK(channel_ring_order(comm, dp->ringOrder));
  int index = 0;
  for (int i = 0; i < n; i++)
    if (dp->ringOrder[i] == comm->rank) index = i;
  for (int c = 0; c < nChannels; c++) {
    channel_t* ch = &dp->channels[c];
    memset(ch, 0, sizeof(*ch));
    ch->id = c;
    ch->ring.userRanks = dp->ringOrder;
    ch->ring.index = index;
    ch->ring.prev = dp->ringOrder[(index + n - 1) % n];
    ch->ring.next = dp->ringOrder[(index + 1) % n];
    ch->tree.up = -1;
    for (int d = 0; d < MK_TREE_ARITY; d++) ch->tree.down[d] = -1;
    ch->peers = calloc((size_t)n, sizeof(channel_peer_t));
    if (!ch->peers) return MK_FAIL(ncclSystemError, "channels: out of memory");
  }
  dp->nChannels = nChannels;
  return ncclSuccess;
}

ncclResult_t channel_connect_rings(struct ncclComm* comm) {
  dp_state_t* dp = &comm->dp;
  if (comm->nRanks == 1) return ncclSuccess;
  transport_conn_req_t* reqs = calloc((size_t)dp->nChannels * 2, sizeof(*reqs));
  if (!reqs) return MK_FAIL(ncclSystemError, "channels: out of memory");
  int n = 0;
  for (int c = 0; c < dp->nChannels; c++) {
    channel_t* ch = &dp->channels[c];
    reqs[n++] = (transport_conn_req_t){&ch->peers[ch->ring.prev].recv[MK_CONN_COLL], 0, ch->ring.prev, c, MK_CONN_COLL};
    reqs[n++] = (transport_conn_req_t){&ch->peers[ch->ring.next].send[MK_CONN_COLL], 1, ch->ring.next, c, MK_CONN_COLL};
  }
  ncclResult_t res = transport_connect(comm, reqs, n);
  free(reqs);
  return res;
}

void channel_free_all(struct ncclComm* comm) {
  dp_state_t* dp = &comm->dp;
  for (int c = dp->nChannels - 1; c >= 0; c--) {
    channel_t* ch = &dp->channels[c];
    if (!ch->peers) continue;
    for (int p = 0; p < comm->nRanks; p++)
      for (int i = MK_NUM_CONNS - 1; i >= 0; i--) {
        transport_conn_free(&ch->peers[p].recv[i]);
        transport_conn_free(&ch->peers[p].send[i]);
      }
    free(ch->peers);
    ch->peers = NULL;
  }
  dp->nChannels = 0;
  free(dp->ringOrder);
  dp->ringOrder = NULL;
}
