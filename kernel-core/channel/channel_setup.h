#ifndef MKCCL_CHANNEL_SETUP_H
#define MKCCL_CHANNEL_SETUP_H

#include "nccl.h"

struct ncclComm;

/* Channels [0, nChannels) with their ring (needs comm->dp.tr.peers). */
ncclResult_t channel_setup(struct ncclComm* comm, int nChannels);
/* Ring connections (recv from prev, send to next) on every channel. */
ncclResult_t channel_connect_rings(struct ncclComm* comm);
/* Whether the connections a collective `coll` (rooted at `root`) needs on
 * algorithm `algo` (MK_ALGO_*) beyond the rings are made: a tree's (both
 * ways to the parent and each child on every channel: AllReduce's once,
 * Broadcast's and Reduce's once per root, channel_tree.h), FLAT's (both
 * ways to every other rank on channel 0). */
int channel_algo_connected(const struct ncclComm* comm, int algo, int coll, int root);
/* Makes them, those not connected yet; every rank calls it for the same
 * collective. */
ncclResult_t channel_connect_algo(struct ncclComm* comm, int algo, int coll, int root);
/* Free every connector and channel, last first. */
void channel_free_all(struct ncclComm* comm);

#endif
