/* Channels and connectors: the paths collectives run over.
 *
 * A channel is one independent lane (one executor thread, one GPU CTA) with
 * its ring (prev/next in a rank order), the trees that follow from it
 * (up/down: channel_tree.h), and per peer a
 * send and a recv connector per connection index (0: collectives, 1: p2p).
 * A connector is one side of one transport connection; `info` is what the
 * executor uses, `step` the host executor's step counter on it. */
#ifndef MKCCL_CHANNEL_CHANNEL_H
#define MKCCL_CHANNEL_CHANNEL_H

#include <stdint.h>

#include "transport/mkccl_transport_v1.h"

#define MK_MAX_CHANNELS 64
#define MK_CONN_COLL 0
#define MK_CONN_P2P 1
#define MK_NUM_CONNS 2
#define MK_TREE_ARITY 3
/* LL lines a host rank asks of its collective connections: one 64-byte
 * cache line a step (32 data bytes, device/host/host_prims.c), for small
 * FLAT AllReduces over SHM (where the transport gives them). */
#define MK_HOST_LL_BYTES (MKCCL_STEPS * 64)

struct transport_entry; /* kernel-core/transport: a loaded transport plugin */

typedef struct connector {
  mkcclConnInfo_v1 info;
  uint64_t step;
  /* The host executor's last read of the peer's word: the head on a send
   * connector, the tail on a recv one. Both only grow, so a wait this value
   * already satisfies needs no read of a cache line the peer writes. */
  uint64_t peerSeen;
  const struct transport_entry* transport; /* NULL until connected */
  void* conn;
  int connected;
  int isSend;
  int peer;
  int channelId;
  int connIndex;
  int needsProxy;
  int proxyLane; /* the proxy lane its ops progress in (proxy_lane_for) */
} connector_t;

typedef struct {
  connector_t send[MK_NUM_CONNS];
  connector_t recv[MK_NUM_CONNS];
} channel_peer_t;

typedef struct {
  int prev, next;
  int index;      /* this rank's position in userRanks */
  int* userRanks; /* [nRanks] ranks in ring order */
} channel_ring_t;

typedef struct {
  int up;                     /* -1 at the root */
  int down[MK_TREE_ARITY];    /* -1 when absent */
} channel_tree_t;

typedef struct {
  int id;
  channel_ring_t ring; /* its trees follow from it: channel_tree_for */
  channel_peer_t* peers; /* [nRanks] */
  /* CollNet (kernel-core/collnet): steps to the collnet plugin and its
   * results back, both progressed by the proxy; unconnected when the
   * communicator has no collnet. */
  connector_t collnetSend, collnetRecv;
} channel_t;

#endif
