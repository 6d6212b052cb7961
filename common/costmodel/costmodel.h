/* The built-in cost model: predicted microseconds per algorithm and
 * protocol for one collective, from a small summary of the communicator's
 * topology and the tuning constants (NCCL's ncclTunerConstants layout, so a
 * v5+ tuner plugin can change them at init).
 *
 *   time = latency + bytes * factor / bandwidth
 *
 * latency: the constants' base latency of the algorithm and protocol plus a
 * per-hop latency (hwLatencies of the intra-node link class, or NET) times
 * the hops on the critical path: a ring makes 2(N-1) steps for AllReduce and
 * N-1 for the others, nNodes/N of them across the network; a tree
 * (a double binary tree over all ranks, see device/common/sched_tree.h)
 * goes up and down its depth log2(N) for AllReduce, once down (Broadcast)
 * or up (Reduce) for the rooted ones, the top log2(nNodes) levels across
 * the network and the rest inside a node.
 * factor: AllReduce ring 2(N-1)/N, tree 2; AllGather and ReduceScatter
 * (N-1)/N of the total; Broadcast and Reduce 1, on a ring (a chain) and on
 * a tree: with two channels or more the data is shared between the two
 * trees and each rank is interior in one only, so it moves the message
 * once. (On one channel an interior node moves it twice; the model leaves
 * that out: it would make the choice flip back and forth where the channel
 * count changes, and the tree is picked where latency dominates.)
 * bandwidth: min(intra, inter) across nodes, intra inside one, spread over
 * channels (nChannels/nChannelsMax of it), derated per protocol (LL 1/2 and
 * capped at llMaxBws, LL128 120/128) and for trees (0.92).
 *
 * CollNetDirect (AllReduce on a communicator with a collnet, Simple only):
 * each byte goes once to the network and its result once back, both ways at
 * once, so factor 1 at the network's bandwidth (interBw), and two network
 * hops of latency (up to the switch that reduces, back down) whatever N.
 * Other algorithms, and LL128 without a GPU, are disabled (-1). Shared by the core (kernel-core/tune) and the tuner
 * plugins (plugins/tuner, plugins/tuner-rules), so it includes ABI headers
 * only. Names of algorithms, protocols and functions: costmodel_names.h. */
#ifndef MKCCL_COSTMODEL_COSTMODEL_H
#define MKCCL_COSTMODEL_COSTMODEL_H

#include <stddef.h>

#include "tuner/nccl_tuner.h"

typedef struct {
  int nRanks;
  int nNodes;
  int ranksPerNode;   /* most ranks on one node */
  int intraLink;      /* NCCL_HW_NVLINK or NCCL_HW_PCI (host memory: PCI) */
  double intraBw;     /* GB/s one rank moves inside its node, all channels together */
  double interBw;     /* GB/s one rank moves over the network, all channels together */
  double intraLatUs;  /* measured per-hop latency (Simple) inside a node, 0: the constants' */
  double interLatUs;  /* same across the network, 0: the constants' */
  int gpu;            /* 1: GPU executors (LL128 exists) */
  int collnet;        /* 1: a collnet reduces AllReduce in the network (CollNetDirect exists) */
} costmodel_topo_t;

/* A summary good enough for a host-memory communicator of nRanks on nNodes
 * nodes when the caller knows nothing better. */
void costmodel_topo_default(costmodel_topo_t* topo, int nRanks, int nNodes);

/* Default constants for the topology (the measured latencies, when given,
 * replace the Simple hop latencies and scale LL/LL128 alike). */
void costmodel_constants(const costmodel_topo_t* topo, ncclTunerConstants_v5_t* c);

/* Channels the model uses for `bytes`: one per 128 KiB, within
 * [1, nChannelsMax]. */
int costmodel_channels(size_t bytes, int nChannelsMax);

/* table[a][p] = predicted microseconds, -1 where the model has no such
 * algorithm/protocol for `func`. Point-to-point functions get ring/Simple
 * only. nChannels is what the time is predicted for. */
void costmodel_table(const costmodel_topo_t* topo, const ncclTunerConstants_v5_t* c, ncclFunc_t func, size_t bytes,
                     int nChannels, int nChannelsMax, float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS]);

#endif
