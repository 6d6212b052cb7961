/* Steps the planner tells the proxy a connector moves for one work item,
 * from the schedules the executors run (device/common): per channel, a ring
 * collective moves chunkSteps steps for every chunk a rank sends or
 * receives per loop, a tree collective one step per loop on each tree
 * connection in the direction(s) its phases use; a p2p transfer moves one step per chunk of its part.
 * The executors and the proxy must agree on these counts exactly (a
 * mismatch hangs the first operation that uses a proxy): see
 * tests/kernel-core/plan/test_plan_steps.c. Pure functions, host only. */
#ifndef MKCCL_PLAN_PLAN_STEPS_H
#define MKCCL_PLAN_PLAN_STEPS_H

#include <stdint.h>

#include "device/common/p2p_part.h"
#include "device/common/sched_ring.h"
#include "device/common/sched_tree.h"
#include "device/common/shape.h"
#include "device/common/work.h"

/* Loops of a ring collective of `count` elements (chunkElems per chunk,
 * over nChannels channels): AllReduce covers nRanks chunks per channel and
 * loop, the others one. */
static inline int64_t plan_ring_loops(int coll, int nRanks, int64_t count, int64_t chunkElems, int nChannels) {
  return sched_nloops(count, chunkElems, nChannels, coll == MK_COLL_ALLREDUCE ? nRanks : 1);
}

/* Steps one channel's ring send and recv connectors move for a collective;
 * hopFromRoot: how far after the root this rank sits on the ring (rooted
 * collectives). */
static inline void plan_ring_conn_steps(int coll, int nRanks, int hopFromRoot, int64_t nLoops, uint64_t* sendSteps,
                                        uint64_t* recvSteps) {
  int N = nRanks, chunkSteps, sliceSteps, sends = 0, recvs = 0;
  mk_coll_shape(coll, MK_ALGO_RING, &chunkSteps, &sliceSteps);
  switch (coll) {
    case MK_COLL_ALLREDUCE: sends = sched_allreduce_sends(N); recvs = sched_allreduce_recvs(N); break;
    case MK_COLL_ALLGATHER: sends = sched_allgather_sends(N); recvs = sched_allgather_recvs(N); break;
    case MK_COLL_REDUCESCATTER: sends = sched_reducescatter_sends(N); recvs = sched_reducescatter_recvs(N); break;
    case MK_COLL_BROADCAST: sends = sched_broadcast_sends(N, hopFromRoot); recvs = sched_broadcast_recvs(N, hopFromRoot); break;
    case MK_COLL_REDUCE: sends = sched_reduce_sends(N, hopFromRoot); recvs = sched_reduce_recvs(N, hopFromRoot); break;
  }
  *sendSteps = (uint64_t)(nLoops * sends * chunkSteps);
  *recvSteps = (uint64_t)(nLoops * recvs * chunkSteps);
}

/* Steps one channel's tree connector to the parent (toParent) or to a
 * child moves for a tree collective of nLoops loops (coll_tree_phase runs
 * one chunk per loop and phase, chunkSteps 1). */
static inline void plan_tree_conn_steps(int coll, int toParent, int64_t nLoops, uint64_t* sendSteps,
                                        uint64_t* recvSteps) {
  int chunkSteps, sliceSteps;
  mk_coll_shape(coll, MK_ALGO_TREE, &chunkSteps, &sliceSteps);
  *sendSteps = (uint64_t)(nLoops * sched_tree_chunks_per_loop(coll, toParent, 1) * chunkSteps);
  *recvSteps = (uint64_t)(nLoops * sched_tree_chunks_per_loop(coll, toParent, 0) * chunkSteps);
}

/* Steps channel `bid` of `nch` moves for its part of a p2p transfer of
 * `bytes` (at least one chunk: an empty transfer still completes on both
 * sides). */
static inline uint64_t plan_p2p_conn_steps(int64_t bytes, int nch, int bid, int64_t chunk) {
  int64_t off, len;
  int chunks;
  coll_p2p_part(bytes, nch, bid, chunk, &off, &len, &chunks);
  return (uint64_t)chunks;
}

#endif
