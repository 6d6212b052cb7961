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
 * and forward, leaves receive. Chunks go step by step (chunkSteps 1). */
#ifndef MKCCL_DEVICE_SCHED_TREE_H
#define MKCCL_DEVICE_SCHED_TREE_H

#include "device/common/sched_ring.h"
#include "fifo/steps.h"

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

/* Chunks each tree connection carries per loop, each way: one up and one
 * down; a loop covers nChannels chunks (blocks 1 in sched_loop_elems). */
MK_HD int sched_tree_allreduce_chunks_per_loop(void) { return 1; }

#endif
