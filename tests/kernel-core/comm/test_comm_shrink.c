/* ncclCommShrink and ncclCommRevoke through the public API, ranks as
 * processes:
 * - default: the excluded rank does not call it (it only aborts its parent);
 *   the others get a communicator of the survivors, renumbered in parent
 *   order, that runs an AllReduce with the right sum;
 * - NCCL_SHRINK_ABORT: the excluded rank is killed (SIGKILL) after a first
 *   collective; the survivors shrink and carry on;
 * - bad arguments: NULL output or list, out-of-range, duplicate or own rank,
 *   unknown flags, everyone excluded;
 * - revoke: new work is refused, a second revoke is harmless, bad flags are
 *   an error, and the revoked communicator is still split and shrunk, then
 *   destroyed (the rank left out of the shrink destroys it too). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "nccl.h"
#include "ranks.h"
#include "ranks_id.h"

static int check_new(ncclComm_t comm, int expectRank, int expectCount, const int* survivors) {
  int c = -1, r = -1;
  CHECK_NCCL(ncclCommCount(comm, &c));
  CHECK_NCCL(ncclCommUserRank(comm, &r));
  CHECK_EQ_INT(c, expectCount);
  CHECK_EQ_INT(r, expectRank);
  /* Each survivor contributes its parent rank + 1: the sum says who is in. */
  float v = (float)(survivors[r] + 1), sum = 0;
  CHECK_NCCL(ncclAllReduce(&v, &sum, 1, ncclFloat, ncclSum, comm, NULL));
  float expect = 0;
  for (int i = 0; i < expectCount; i++) expect += (float)(survivors[i] + 1);
  CHECK_MSG(sum == expect, "sum %g, expected %g", sum, expect);
  return 0;
}

static int bad_args(ncclComm_t comm, int rank, int n) {
  ncclComm_t out = NULL;
  int other = (rank + 1) % n, twice[2] = {other, other}, self = rank, far = n;
  CHECK_EQ_INT(ncclCommShrink(comm, &other, 1, NULL, NULL, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommShrink(comm, NULL, 1, &out, NULL, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommShrink(comm, &far, 1, &out, NULL, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommShrink(comm, twice, 2, &out, NULL, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommShrink(comm, &self, 1, &out, NULL, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommShrink(comm, &other, 1, &out, NULL, 0x40), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommShrink(comm, &other, n, &out, NULL, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  CHECK_EQ_INT(ncclCommShrink(comm, &other, -1, &out, NULL, NCCL_SHRINK_DEFAULT), ncclInvalidArgument);
  CHECK(out == NULL);
  CHECK(ncclGetLastError(comm)[0] != '\0');
  return 0;
}

/* Every rank joins the world (an id made in rank 0 after the fork). */
static int world_join(int rank, int n, ncclComm_t* world) {
  ncclUniqueId id;
  ranks_unique_id(rank, &id);
  CHECK_NCCL(ncclCommInitRank(world, n, id, rank));
  return 0;
}

/* Rank 1 is left out and only aborts its parent. */
static int default_main(int rank, int n, void* arg) {
  (void)arg;
  ncclComm_t world;
  CHECK(world_join(rank, n, &world) == 0);
  CHECK(bad_args(world, rank, n) == 0);
  int excluded = 1;
  if (rank == excluded) {
    CHECK_NCCL(ncclCommAbort(world));
    return 0;
  }
  ncclComm_t shrunk = NULL;
  CHECK_NCCL(ncclCommShrink(world, &excluded, 1, &shrunk, NULL, NCCL_SHRINK_DEFAULT));
  CHECK(shrunk != NULL);
  int survivors[8], m = 0;
  for (int r = 0; r < n; r++)
    if (r != excluded) survivors[m++] = r;
  CHECK(check_new(shrunk, rank < excluded ? rank : rank - 1, n - 1, survivors) == 0);
  CHECK_NCCL(ncclCommDestroy(shrunk));
  CHECK_NCCL(ncclCommAbort(world)); /* its excluded rank is gone */
  return 0;
}

/* The last rank dies after one collective; the others shrink with ABORT. */
static int abort_main(int rank, int n, void* arg) {
  (void)arg;
  ncclComm_t world;
  CHECK(world_join(rank, n, &world) == 0);
  float v = 1, sum = 0;
  CHECK_NCCL(ncclAllReduce(&v, &sum, 1, ncclFloat, ncclSum, world, NULL));
  CHECK(sum == (float)n);
  int dead = n - 1;
  if (rank == dead) raise(SIGKILL);
  int excluded[1] = {dead};
  ncclComm_t shrunk = NULL;
  CHECK_NCCL(ncclCommShrink(world, excluded, 1, &shrunk, NULL, NCCL_SHRINK_ABORT));
  int survivors[8];
  for (int r = 0; r < n - 1; r++) survivors[r] = r;
  CHECK(check_new(shrunk, rank, n - 1, survivors) == 0);
  CHECK_NCCL(ncclCommDestroy(shrunk));
  CHECK_NCCL(ncclCommAbort(world));
  return 0;
}

static int revoke_main(int rank, int n, void* arg) {
  (void)arg;
  ncclComm_t world;
  CHECK(world_join(rank, n, &world) == 0);
  float v = 1, sum = 0;
  CHECK_NCCL(ncclAllReduce(&v, &sum, 1, ncclFloat, ncclSum, world, NULL));
  CHECK_EQ_INT(ncclCommRevoke(world, 0x8), ncclInvalidArgument);
  CHECK_NCCL(ncclCommRevoke(world, NCCL_REVOKE_DEFAULT));
  CHECK_NCCL(ncclCommRevoke(world, NCCL_REVOKE_DEFAULT));
  CHECK_EQ_INT(ncclAllReduce(&v, &sum, 1, ncclFloat, ncclSum, world, NULL), ncclInvalidUsage);
  ncclComm_t split = NULL;
  CHECK_NCCL(ncclCommSplit(world, 0, rank, &split, NULL));
  int everyone[8];
  for (int r = 0; r < n; r++) everyone[r] = r;
  CHECK(check_new(split, rank, n, everyone) == 0);
  CHECK_NCCL(ncclCommDestroy(split));
  int left = n - 1;
  if (rank != left) {
    ncclComm_t shrunk = NULL;
    CHECK_NCCL(ncclCommShrink(world, &left, 1, &shrunk, NULL, NCCL_SHRINK_DEFAULT));
    CHECK(check_new(shrunk, rank, n - 1, everyone) == 0);
    CHECK_NCCL(ncclCommDestroy(shrunk));
  }
  CHECK_NCCL(ncclCommDestroy(world));
  return 0;
}

int main(void) {
  for (int n = 2; n <= 4; n++) {
    CHECK_MSG(ranks_run(n, default_main, NULL, 120) == 0, "default, %d ranks", n);
    int status[8];
    CHECK_MSG(ranks_run_status(n, abort_main, NULL, 120, status) == 0, "abort, %d ranks: timed out", n);
    for (int r = 0; r < n - 1; r++) CHECK_MSG(status[r] == 0, "abort, %d ranks: rank %d ended with %d", n, r, status[r]);
    CHECK_MSG(status[n - 1] == -SIGKILL, "abort, %d ranks: the dead rank ended with %d", n, status[n - 1]);
    CHECK_MSG(ranks_run(n, revoke_main, NULL, 120) == 0, "revoke, %d ranks", n);
  }
  printf("test_comm_shrink: OK\n");
  return 0;
}
