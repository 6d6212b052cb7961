/* FLAT AllReduce beyond one chunk: "direct", a reduce-scatter and an
 * all-gather in which every rank talks to every other at once, written once
 * for the executors and the planner (which counts its steps).
 *
 * Rank r owns piece r of the buffer. Each channel moves its part of every
 * piece, chunk by chunk; for chunk l:
 *   P1  piece k of the local input to rank k, for every other rank k;
 *   P2  piece r from every other rank, combined with the local input's
 *       piece r into the output and sent to every other rank;
 *   P3  piece k's result from rank k into the output, for every other k.
 * A chunk takes two dependent hops, where a ring takes 2(N-1): what a
 * small-rank AllReduce over sockets pays for, since each hop costs a
 * network round of thread hand-offs. P1 of the next
 * chunk goes out before P3 of this one, so the network carries both.
 *
 * Every connection carries, per chunk, P1 then P2 in that order and one
 * step each (FLAT's shape: chunkSteps = sliceSteps = 1): 2 steps a chunk
 * each way (mk_flat_conn_steps), whatever the chunk's length (a piece's
 * last chunks may be short or empty). Only rank r combines piece r, so
 * every rank gets the same bits.
 *
 * Include after defining what coll_tree.h needs (MK_ALGO_FN, MK_PRIMS_T,
 * MK_PRIMS_CHUNK, MK_PRIMS_BIND). */
#ifndef MKCCL_DEVICE_COLL_FLAT_H
#define MKCCL_DEVICE_COLL_FLAT_H

#include "device/common/sched_flat.h"
#include "device/common/sched_ring.h"
#include "device/common/work.h"

typedef struct {
  int rank, nRanks;
  int bid;   /* this channel's index among the item's channels */
  int64_t ts;
  void* exec; /* the executor's, for MK_PRIMS_BIND */
  mk_flat_shape_t shape;
} mk_flat_ctx_t;

#define MK_FLAT_AT(base, elem, ts) ((char*)(base) + (elem) * (ts))
#endif

#ifndef MKCCL_DEVICE_COLL_FLAT_FNS
#define MKCCL_DEVICE_COLL_FLAT_FNS
/* P1 of chunk l: piece k of the input to each rank k. */
MK_ALGO_FN int coll_flat_scatter(MK_PRIMS_T* p, const mk_work_t* w, mk_flat_ctx_t* c, const int* peers, int n,
                                 int64_t l) {
  for (int i = 0; i < n; i++) {
    int64_t off, len = mk_flat_chunk(&c->shape, peers[i], c->bid, l, &off);
    if (MK_PRIMS_BIND(p, c, NULL, 0, &peers[i], 1) ||
        MK_PRIMS_CHUNK(p, MK_PRIM_SEND, MK_FLAT_AT(w->sendbuff, off, c->ts), NULL, len))
      return 1;
  }
  return 0;
}

MK_ALGO_FN int coll_flat_direct(MK_PRIMS_T* p, const mk_work_t* w, mk_flat_ctx_t* c) {
  int peers[MK_FLAT_MAX_RANKS], n = 0;
  for (int r = 0; r < c->nRanks; r++)
    if (r != c->rank) peers[n++] = r;
  int64_t nLoops = c->shape.nLoops;
  if (nLoops > 0 && coll_flat_scatter(p, w, c, peers, n, 0)) return 1;
  for (int64_t l = 0; l < nLoops; l++) {
    int64_t off, len = mk_flat_chunk(&c->shape, c->rank, c->bid, l, &off);
    if (MK_PRIMS_BIND(p, c, peers, n, peers, n) ||
        MK_PRIMS_CHUNK(p, MK_PRIM_RECV_REDUCE_COPY_SEND, MK_FLAT_AT(w->sendbuff, off, c->ts),
                       MK_FLAT_AT(w->recvbuff, off, c->ts), len))
      return 1;
    if (l + 1 < nLoops && coll_flat_scatter(p, w, c, peers, n, l + 1)) return 1;
    for (int i = 0; i < n; i++) {
      len = mk_flat_chunk(&c->shape, peers[i], c->bid, l, &off);
      if (MK_PRIMS_BIND(p, c, &peers[i], 1, NULL, 0) ||
          MK_PRIMS_CHUNK(p, MK_PRIM_RECV, NULL, MK_FLAT_AT(w->recvbuff, off, c->ts), len))
        return 1;
    }
  }
  return 0;
}
#endif
