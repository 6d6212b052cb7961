/* The tree collectives, written once for every executor (the schedule is
 * device/common/sched_tree.h).
 *
 * Include after defining what coll_ring.h needs and:
 *   MK_PRIMS_BIND(p, ctx, recvPeers, nRecv, sendPeers, nSend)
 *       point the primitives at the collective connections from recvPeers
 *       and to sendPeers (ranks), starting a new operation on them; ctx is
 *       the mk_tree_ctx_t (its `exec` is the executor's); 0 on success.
 * Offsets are in elements of size ts. */
#ifndef MKCCL_DEVICE_COLL_TREE_H
#define MKCCL_DEVICE_COLL_TREE_H

#include "device/common/p2p_part.h"
#include "device/common/sched_tree.h"
#include "device/common/shape.h"
#include "device/common/work.h"

typedef struct {
  int up;                     /* parent rank, -1 at the root */
  int down[MK_TREE_MAX_DOWN]; /* child ranks, the nDown first valid */
  int nDown;
  int bid;                    /* this channel's index among the item's channels */
  int64_t chunkElems;
  int64_t align;
  int64_t ts;
  void* exec;                 /* the executor's, for MK_PRIMS_BIND */
} mk_tree_ctx_t;

/* down: MK_TREE_MAX_DOWN entries, -1 where absent (in any order). */
MK_HD void coll_tree_ctx_init(mk_tree_ctx_t* c, int up, const int* down, int bid, int64_t chunkBytes, int64_t ts,
                              void* exec) {
  c->up = up;
  c->nDown = 0;
  for (int i = 0; i < MK_TREE_MAX_DOWN; i++) {
    c->down[i] = -1;
    if (down[i] >= 0) c->down[c->nDown++] = down[i];
  }
  c->bid = bid;
  c->ts = ts;
  c->align = mk_elem_align((int)ts);
  c->chunkElems = chunkBytes / ts;
  c->exec = exec;
}

#ifndef MK_AT
#define MK_AT(base, elem, ts) ((char*)(base) + (elem) * (ts))
#endif

/* One phase: primitive `prim` on every chunk of this channel's part. */
MK_ALGO_FN int coll_tree_phase(MK_PRIMS_T* p, const mk_work_t* w, const mk_tree_ctx_t* c, int prim, const void* src,
                               void* dst) {
  int64_t count = (int64_t)w->count;
  int64_t loop = sched_loop_elems(c->chunkElems, w->nChannels, 1);
  for (int64_t grid = 0; grid < count; grid += loop) {
    int64_t real = sched_real_chunk(count, grid, c->chunkElems, w->nChannels, 1, c->align);
    int64_t off = grid + (int64_t)c->bid * real;
    if (MK_PRIMS_CHUNK(p, prim, MK_AT(src, off, c->ts), MK_AT(dst, off, c->ts), coll_clamp(count, off, real)))
      return 1;
  }
  return 0;
}

/* AllReduce: reduce up the tree, then broadcast the result down. */
MK_ALGO_FN int coll_tree_allreduce(MK_PRIMS_T* p, const mk_work_t* w, const mk_tree_ctx_t* c) {
  int hasUp = c->up >= 0;
  if (MK_PRIMS_BIND(p, c, c->down, c->nDown, &c->up, hasUp)) return 1;
  if (coll_tree_phase(p, w, c, sched_tree_up_op(hasUp, c->nDown), w->sendbuff, w->recvbuff)) return 1;
  if (MK_PRIMS_BIND(p, c, &c->up, hasUp, c->down, c->nDown)) return 1;
  /* The root sends the result it holds in its output. */
  const void* src = hasUp ? w->sendbuff : (const void*)w->recvbuff;
  return coll_tree_phase(p, w, c, sched_tree_down_op(hasUp, c->nDown), src, w->recvbuff);
}

/* Broadcast: down a tree rooted at the root (the ctx holds that tree). */
MK_ALGO_FN int coll_tree_broadcast(MK_PRIMS_T* p, const mk_work_t* w, const mk_tree_ctx_t* c) {
  int hasUp = c->up >= 0;
  if (MK_PRIMS_BIND(p, c, &c->up, hasUp, c->down, c->nDown)) return 1;
  return coll_tree_phase(p, w, c, sched_tree_bcast_op(hasUp, c->nDown), w->sendbuff, w->recvbuff);
}

/* Reduce: up a tree rooted at the root; only the root writes its output. */
MK_ALGO_FN int coll_tree_reduce(MK_PRIMS_T* p, const mk_work_t* w, const mk_tree_ctx_t* c) {
  int hasUp = c->up >= 0;
  if (MK_PRIMS_BIND(p, c, c->down, c->nDown, &c->up, hasUp)) return 1;
  return coll_tree_phase(p, w, c, sched_tree_up_op(hasUp, c->nDown), w->sendbuff, w->recvbuff);
}

MK_ALGO_FN int coll_tree_run(MK_PRIMS_T* p, const mk_work_t* w, const mk_tree_ctx_t* c) {
  switch (w->coll) {
    case MK_COLL_ALLREDUCE: return coll_tree_allreduce(p, w, c);
    case MK_COLL_BROADCAST: return coll_tree_broadcast(p, w, c);
    case MK_COLL_REDUCE: return coll_tree_reduce(p, w, c);
    default: return 1; /* the planner picks trees for these only */
  }
}

#endif
