/* The tree a collective runs on a channel, in ranks: AllReduce the
 * channel's own tree of the double binary tree (channel_setup), Broadcast
 * and Reduce that tree rotated so their root is its root
 * (sched_dtree_rooted). One function for the planner (proxy steps,
 * connections) and the host executor, so both always see the same tree. */
#ifndef MKCCL_CHANNEL_CHANNEL_TREE_H
#define MKCCL_CHANNEL_CHANNEL_TREE_H

#include "channel/channel.h"
#include "device/common/sched_tree.h"
#include "device/common/work.h"

/* Whether collective `coll` runs on a tree rooted at its root. */
static inline int channel_tree_is_rooted(int coll) { return coll == MK_COLL_BROADCAST || coll == MK_COLL_REDUCE; }

static inline void channel_tree_for(const channel_t* ch, int nRanks, int coll, int root, channel_tree_t* out) {
  if (!channel_tree_is_rooted(coll)) {
    *out = ch->tree;
    return;
  }
  const int* order = ch->ring.userRanks;
  int rootPos = 0;
  for (int i = 0; i < nRanks; i++)
    if (order[i] == root) rootPos = i;
  int up, d0, d1;
  sched_dtree_rooted(nRanks, ch->ring.index, rootPos, sched_tree_of_channel(ch->id), &up, &d0, &d1);
  out->up = up < 0 ? -1 : order[up];
  for (int d = 0; d < MK_TREE_ARITY; d++) out->down[d] = -1;
  out->down[0] = d0 < 0 ? -1 : order[d0];
  out->down[1] = d1 < 0 ? -1 : order[d1];
}

#endif
