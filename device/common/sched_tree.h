/* Tree algorithms' shapes and step schedules, written once for the
 * executors and the planner.
 *
 * The double binary tree is NCCL's (ncclGetDtree): tree 0 is a binary tree
 * over positions 0..n-1 whose leaves are the odd positions; tree 1 mirrors
 * it (n even) or shifts it by one (n odd), so the leaves of one tree are the
 * interior nodes of the other and every position is interior in at most
 * one tree. Positions are indices in the ring order (ranks of one host next
 * to each other), so the deep, numerous edges stay inside a host and only
 * the few top ones cross hosts.
 *
 * AllReduce on a tree goes up then down, one chunk at a time, so chunks
 * pipeline along the tree's depth: reduce phase, leaves send their input,
 * interior nodes receive from their children, reduce with their input and
 * send to their parent, the root receives, reduces and writes the result;
 * broadcast phase, the root sends the result, interior nodes receive, copy
 * and forward, leaves receive. Chunks go step by step (chunkSteps 1).
 *
 * Broadcast and Reduce run one phase of that on a tree rooted at their
 * root: the same double binary tree over positions, its positions rotated
 * so the collective's root takes the tree root's place (sched_dtree_rooted).
 * A rotation keeps the ring order's neighbourhoods (a host's ranks stay
 * side by side, but for the one wrap), costs nothing to compute, and every
 * rank derives the same tree from (n, root, channel) alone; its price is one
 * set of tree connections per root used (connected the first time). */
#ifndef MKCCL_DEVICE_SCHED_TREE_H
#define MKCCL_DEVICE_SCHED_TREE_H

#include "device/common/sched_ring.h"
#include "device/common/work.h"
#include "device/common/steps.h"

#define MK_TREE_MAX_DOWN 2 /* binary trees */
#define MK_TREE_COUNT 2    /* trees of the double binary tree */

/* Binary tree over positions 0..n-1 rooted at 0: *up (-1 at the root) and
 * children d0, d1 (-1 when absent). Found from the lowest set bit of pos:
 * its parent clears that bit and sets the next one (or only clears it past
 * the end), its children sit half that bit below and above. */
MK_HD void sched_btree(int n, int pos, int* up, int* d0, int* d1) {
  int bit = 1;
  while (bit < n && !(bit & pos)) bit <<= 1;
  if (pos == 0) {
    *up = -1;
    *d0 = -1;
    *d1 = n > 1 ? bit >> 1 : -1; /* bit is the first power of two >= n */
    return;
  }
  int u = (pos ^ bit) | (bit << 1);
  *up = u >= n ? (pos ^ bit) : u;
  int low = bit >> 1;
  *d0 = low ? pos - low : -1;
  int d = low ? pos + low : -1;
  while (d >= n) { /* past the end: the nearest child that exists */
    low >>= 1;
    d = low ? pos + low : -1;
  }
  *d1 = d;
}

/* Tree `which` (0 or 1) of the double binary tree, in positions. */
MK_HD void sched_dtree(int n, int pos, int which, int* up, int* d0, int* d1) {
  if (which == 0 || n < 2) {
    sched_btree(n, pos, up, d0, d1);
    return;
  }
  int u, a, b;
  if (n % 2) { /* shift by one */
    sched_btree(n, sched_mod(pos - 1, n), &u, &a, &b);
    *up = u < 0 ? -1 : (u + 1) % n;
    *d0 = a < 0 ? -1 : (a + 1) % n;
    *d1 = b < 0 ? -1 : (b + 1) % n;
  } else { /* mirror */
    sched_btree(n, n - 1 - pos, &u, &a, &b);
    *up = u < 0 ? -1 : n - 1 - u;
    *d0 = a < 0 ? -1 : n - 1 - a;
    *d1 = b < 0 ? -1 : n - 1 - b;
  }
}

/* The tree a channel runs: channels alternate between the two trees. */
MK_HD int sched_tree_of_channel(int channelId) { return channelId % MK_TREE_COUNT; }

/* The root's position in tree `which`: 0 in tree 0; tree 1 mirrors it to
 * n-1 (n even) or shifts it to 1 (n odd). */
MK_HD int sched_dtree_root(int n, int which) {
  if (which == 0 || n < 2) return 0;
  return n % 2 ? 1 : n - 1;
}

/* Tree `which` rotated so that position rootPos is its root; in positions.
 * Position pos plays the part of position pos - rootPos + treeRoot. */
MK_HD void sched_dtree_rooted(int n, int pos, int rootPos, int which, int* up, int* d0, int* d1) {
  int shift = sched_dtree_root(n, which) - rootPos;
  int u, a, b;
  sched_dtree(n, sched_mod(pos + shift, n), which, &u, &a, &b);
  *up = u < 0 ? -1 : sched_mod(u - shift, n);
  *d0 = a < 0 ? -1 : sched_mod(a - shift, n);
  *d1 = b < 0 ? -1 : sched_mod(b - shift, n);
}

/* Whether a collective runs on a tree rooted at its root (Broadcast,
 * Reduce) rather than on its channel's own tree (AllReduce). */
MK_HD int sched_tree_is_rooted(int coll) { return coll == MK_COLL_BROADCAST || coll == MK_COLL_REDUCE; }

/* The tree collective `coll` (rooted ones at `root`) runs on channel
 * `channelId`, in ranks: order[pos] is the rank at ring position pos, index
 * this rank's position. *up is -1 at the root, down[MK_TREE_MAX_DOWN] -1
 * where absent. One function for the planner, the host executor and the
 * GPU kernels, so all of them always see the same tree. */
MK_HD void sched_tree_ranks(int n, const int* order, int index, int channelId, int coll, int root, int* up,
                            int* down) {
  int which = sched_tree_of_channel(channelId), u, d0, d1;
  if (sched_tree_is_rooted(coll)) {
    int rootPos = 0;
    for (int i = 0; i < n; i++)
      if (order[i] == root) rootPos = i;
    sched_dtree_rooted(n, index, rootPos, which, &u, &d0, &d1);
  } else {
    sched_dtree(n, index, which, &u, &d0, &d1);
  }
  *up = u < 0 ? -1 : order[u];
  down[0] = d0 < 0 ? -1 : order[d0];
  down[1] = d1 < 0 ? -1 : order[d1];
}

/* Reduce phase: the primitive for one chunk (recv from the children, send
 * to the parent). */
MK_HD int sched_tree_up_op(int hasUp, int nDown) {
  if (!hasUp) return nDown ? MK_PRIM_RECV_REDUCE_COPY : MK_PRIM_NONE;
  return nDown ? MK_PRIM_RECV_REDUCE_SEND : MK_PRIM_SEND;
}

/* Broadcast phase: the primitive for one chunk (recv from the parent, send
 * to the children). The root sends its output (the executor passes the
 * output buffer as the source). */
MK_HD int sched_tree_down_op(int hasUp, int nDown) {
  if (!hasUp) return nDown ? MK_PRIM_SEND_OUTPUT : MK_PRIM_NONE;
  return nDown ? MK_PRIM_RECV_COPY_SEND : MK_PRIM_RECV;
}

/* Broadcast: the primitive for one chunk. The root sends its input (and
 * copies it to its output), interior nodes receive, copy and forward,
 * leaves receive. */
MK_HD int sched_tree_bcast_op(int hasUp, int nDown) {
  if (!hasUp) return nDown ? MK_PRIM_COPY_SEND : MK_PRIM_NONE;
  return nDown ? MK_PRIM_RECV_COPY_SEND : MK_PRIM_RECV;
}

/* Reduce is the reduce phase alone: sched_tree_up_op. */

/* Chunks a tree connection carries per loop (a loop covers nChannels
 * chunks: blocks 1 in sched_loop_elems), for the connection to the parent
 * (toParent) or to a child, sending or receiving. AllReduce: one each way
 * (up in the reduce phase, down in the broadcast phase); Broadcast: only
 * down (from the parent, to the children); Reduce: only up. */
MK_HD int sched_tree_chunks_per_loop(int coll, int toParent, int isSend) {
  int up = toParent ? isSend : !isSend; /* the chunk travels towards the root */
  switch (coll) {
    case MK_COLL_BROADCAST: return !up;
    case MK_COLL_REDUCE: return up;
    default: return 1;
  }
}

#endif
