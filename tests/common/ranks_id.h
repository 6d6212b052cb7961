/* A unique id for forked ranks, made in rank 0 after the fork and shared
 * (tests/common/ranks.h, ranks_share, says why not in the parent). */
#ifndef MKCCL_TESTS_RANKS_ID_H
#define MKCCL_TESTS_RANKS_ID_H

#include "check.h"
#include "nccl.h"
#include "ranks.h"

static inline int ranks_make_unique_id(void* id) { return ncclGetUniqueId((ncclUniqueId*)id) != ncclSuccess; }

/* Every rank calls it at the same point; all get rank 0's id in *id. */
static inline void ranks_unique_id(int rank, ncclUniqueId* id) {
  CHECK(ranks_share(rank, id, sizeof(*id), ranks_make_unique_id) == 0);
}

/* A rank's usual start: rank 0's id shared, then a communicator of n ranks
 * (every rank calls it at the same point). */
static inline ncclComm_t ranks_comm_init(int rank, int n) {
  ncclUniqueId id;
  ranks_unique_id(rank, &id);
  ncclComm_t comm;
  CHECK_NCCL(ncclCommInitRank(&comm, n, id, rank));
  return comm;
}

#endif
