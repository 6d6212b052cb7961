/* ncclCommSplit through the public API: colour and key decide membership
 * and order; NCCL_SPLIT_NOCOLOR gets NULL; splits of splits; a
 * non-blocking parent's config is inherited (the split returns
 * ncclInProgress); an explicit config wins. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "nccl.h"
#include "ranks_id.h"

static void expect(ncclComm_t comm, int rank, int n) {
  int c = -1, r = -1;
  CHECK_NCCL(ncclCommCount(comm, &c));
  CHECK_NCCL(ncclCommUserRank(comm, &r));
  CHECK_EQ_INT(c, n);
  CHECK_EQ_INT(r, rank);
}

static void wait_ready(ncclComm_t comm) {
  ncclResult_t async = ncclInProgress;
  for (int i = 0; i < 60000 && async == ncclInProgress; i++) {
    CHECK_NCCL(ncclCommGetAsyncError(comm, &async));
    if (async == ncclInProgress) usleep(1000);
  }
  CHECK_EQ_INT(async, ncclSuccess);
}

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  ncclUniqueId id;
  ranks_unique_id(rank, &id);
  ncclComm_t world, byParity, byHalf, sub;
  CHECK_NCCL(ncclCommInitRank(&world, n, id, rank));

  /* Colour = parity, key = -rank: each colour in reverse parent order. */
  CHECK_NCCL(ncclCommSplit(world, rank % 2, -rank, &byParity, NULL));
  int members = (n + 1 - rank % 2) / 2; /* ranks of my parity */
  int above = 0;                        /* same parity, higher rank: they come first */
  for (int r = rank + 2; r < n; r += 2) above++;
  expect(byParity, above, members);

  /* Equal keys: parent order. The last rank opts out. */
  int color = rank == n - 1 ? NCCL_SPLIT_NOCOLOR : rank < n / 2;
  byHalf = (ncclComm_t)0x1;
  CHECK_NCCL(ncclCommSplit(world, color, 0, &byHalf, NULL));
  if (rank == n - 1) {
    CHECK(byHalf == NULL);
  } else {
    int first = rank < n / 2 ? 0 : n / 2;
    int size = rank < n / 2 ? n / 2 : n - n / 2 - 1;
    expect(byHalf, rank - first, size);
    /* A split of a split: everyone into one colour, key reverses again. */
    CHECK_NCCL(ncclCommSplit(byHalf, 3, size - (rank - first), &sub, NULL));
    expect(sub, size - 1 - (rank - first), size);
    CHECK_NCCL(ncclCommDestroy(sub));
    CHECK_NCCL(ncclCommDestroy(byHalf));
  }
  CHECK_NCCL(ncclCommDestroy(byParity));

  /* Config inheritance: a non-blocking parent makes non-blocking children. */
  ncclConfig_t nb = NCCL_CONFIG_INITIALIZER;
  nb.blocking = 0;
  ncclComm_t nbParent, nbChild, blockingChild;
  CHECK_EQ_INT(ncclCommSplit(world, 0, rank, &nbParent, &nb), ncclInProgress);
  wait_ready(nbParent);
  CHECK_EQ_INT(ncclCommSplit(nbParent, 0, rank, &nbChild, NULL), ncclInProgress);
  wait_ready(nbChild);
  expect(nbChild, rank, n);
  ncclConfig_t bl = NCCL_CONFIG_INITIALIZER;
  bl.blocking = 1;
  CHECK_EQ_INT(ncclCommSplit(nbParent, 0, rank, &blockingChild, &bl), ncclSuccess);
  expect(blockingChild, rank, n);
  CHECK_NCCL(ncclCommDestroy(blockingChild));
  CHECK_NCCL(ncclCommDestroy(nbChild));
  CHECK_NCCL(ncclCommDestroy(nbParent));
  CHECK_NCCL(ncclCommDestroy(world));
  return 0;
}

int main(void) {
  for (int n = 2; n <= 7; n += 5) {
    CHECK_MSG(ranks_run(n, rank_main, NULL, 120) == 0, "%d ranks", n);
    printf("split with %d ranks: ok\n", n);
  }
  return 0;
}
