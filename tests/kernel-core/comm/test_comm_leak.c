/* Init and destroy (and abort, and failed init) 100 times: the process
 * ends with the file descriptors and threads it started with. Counted in
 * /proc/self/fd and /proc/self/task. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "nccl.h"
#include "proc_count.h"
#include "ranks.h"

static int fds(void) { return proc_count_fds(); }
static int threads(void) { return proc_count_threads(); }

static void one_rank(void) {
  ncclUniqueId id;
  ncclComm_t comm;
  CHECK_NCCL(ncclGetUniqueId(&id));
  CHECK_NCCL(ncclCommInitRank(&comm, 1, id, 0));
  CHECK_NCCL(ncclCommDestroy(comm));
}

static void nonblocking_rank(void) {
  ncclUniqueId id;
  ncclComm_t comm;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  CHECK_NCCL(ncclGetUniqueId(&id));
  CHECK_EQ_INT(ncclCommInitRankConfig(&comm, 1, id, 0, &config), ncclInProgress);
  ncclResult_t async = ncclInProgress;
  while (async == ncclInProgress) CHECK_NCCL(ncclCommGetAsyncError(comm, &async));
  CHECK_EQ_INT(async, ncclSuccess);
  CHECK_NCCL(ncclCommDestroy(comm));
}

static void aborted_rank(void) {
  ncclUniqueId id;
  ncclComm_t comm;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  CHECK_NCCL(ncclGetUniqueId(&id));
  CHECK_EQ_INT(ncclCommInitRankConfig(&comm, 3, id, 1, &config), ncclInProgress); /* the others never come */
  CHECK_NCCL(ncclCommAbort(comm));
}

static void init_all(void) {
  ncclComm_t comms[4];
  CHECK_NCCL(ncclCommInitAll(comms, 4, NULL));
  for (int i = 0; i < 4; i++) CHECK_NCCL(ncclCommDestroy(comms[i]));
}

static void bad_config(void) {
  ncclUniqueId id;
  ncclComm_t comm;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 3;
  CHECK_NCCL(ncclGetUniqueId(&id));
  CHECK_EQ_INT(ncclCommInitRankConfig(&comm, 1, id, 0, &config), ncclInvalidArgument);
  /* The id's root is still waiting: use it, so it ends. */
  CHECK_NCCL(ncclCommInitRank(&comm, 1, id, 0));
  CHECK_NCCL(ncclCommDestroy(comm));
}

/* ---- the same in every rank of 4 processes, with splits ---------------------------------------
 * Rank 0 makes each id (so its process hosts and must join each root) and
 * publishes it in shared memory; the parent forks with no thread running. */
#define ITERS 20
typedef struct {
  volatile int ready[ITERS];
  ncclUniqueId ids[ITERS];
} ids_t;

static int rank_loop(int rank, int n, void* arg) {
  ids_t* sh = arg;
  int f0 = fds(), t0 = threads();
  for (int i = 0; i < ITERS; i++) {
    if (rank == 0) {
      CHECK_NCCL(ncclGetUniqueId(&sh->ids[i]));
      __atomic_store_n(&sh->ready[i], 1, __ATOMIC_RELEASE);
    }
    for (int k = 0; k < 30000 && !__atomic_load_n(&sh->ready[i], __ATOMIC_ACQUIRE); k++) usleep(1000);
    ncclComm_t comm, sub;
    CHECK_NCCL(ncclCommInitRank(&comm, n, sh->ids[i], rank));
    CHECK_NCCL(ncclCommSplit(comm, rank % 2, 0, &sub, NULL));
    CHECK_NCCL(ncclCommDestroy(sub));
    CHECK_NCCL(ncclCommDestroy(comm));
  }
  CHECK_EQ_INT(fds(), f0);
  CHECK_EQ_INT(threads(), t0);
  return 0;
}

int main(void) {
  /* Warm up: the log, the parameter table. */
  one_rank();
  int f0 = fds(), t0 = threads();
  for (int i = 0; i < 100; i++) {
    one_rank();
    nonblocking_rank();
    aborted_rank();
    bad_config();
    if (i % 10 == 0) init_all();
  }
  CHECK_EQ_INT(fds(), f0);
  CHECK_EQ_INT(threads(), t0);
  printf("100 rounds in one process: %d fds, %d threads before and after\n", f0, t0);

  ids_t* sh = ranks_shared_alloc(sizeof(ids_t));
  CHECK(sh);
  CHECK(ranks_run(4, rank_loop, sh, 120) == 0);
  printf("%d rounds in 4 processes: ok\n", ITERS);
  return 0;
}
