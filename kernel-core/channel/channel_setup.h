#ifndef MKCCL_CHANNEL_SETUP_H
#define MKCCL_CHANNEL_SETUP_H

#include "nccl.h"

struct ncclComm;

/* Channels [0, nChannels) with their ring (needs comm->dp.peers). */
ncclResult_t channel_setup(struct ncclComm* comm, int nChannels);
/* Ring connections (recv from prev, send to next) on every channel. */
ncclResult_t channel_connect_rings(struct ncclComm* comm);
/* Tree connections (both ways to the parent and each child) on every
 * channel, once: every rank calls it for the same collective. */
ncclResult_t channel_connect_trees(struct ncclComm* comm);
/* The same for the trees Broadcast and Reduce rooted at `root` run
 * (channel_tree.h), once per root. */
ncclResult_t channel_connect_rooted_trees(struct ncclComm* comm, int root);
/* Collective connections both ways to every other rank on channel 0 (the
 * flat AllReduce), those not connected yet, once: every rank calls it for
 * the same collective. */
ncclResult_t channel_connect_flat(struct ncclComm* comm);
/* Free every connector and channel, last first. */
void channel_free_all(struct ncclComm* comm);

#endif
