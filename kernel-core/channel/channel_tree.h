/* The tree a collective runs on a channel, in ranks: AllReduce the
 * channel's own tree of the double binary tree (channel_setup), Broadcast
 * and Reduce that tree rotated so their root is its root
 * (sched_dtree_rooted), as device/common/sched_tree.h's sched_tree_ranks
 * gives it to the planner, the host executor and the GPU kernels. */
#ifndef MKCCL_CHANNEL_CHANNEL_TREE_H
#define MKCCL_CHANNEL_CHANNEL_TREE_H

#include "channel/channel.h"
#include "device/common/sched_tree.h"
#include "device/common/work.h"

/* Whether collective `coll` runs on a tree rooted at its root. */
static inline int channel_tree_is_rooted(int coll) { return sched_tree_is_rooted(coll); }

static inline void channel_tree_for(const channel_t* ch, int nRanks, int coll, int root, channel_tree_t* out) {
  int down[MK_TREE_MAX_DOWN];
  sched_tree_ranks(nRanks, ch->ring.userRanks, ch->ring.index, ch->id, coll, root, &out->up, down);
  for (int d = 0; d < MK_TREE_ARITY; d++) out->down[d] = d < MK_TREE_MAX_DOWN ? down[d] : -1;
}

#endif
