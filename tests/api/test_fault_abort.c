/* ncclCommAbort from another thread unblocks a rank stuck in a collective
 * (its peer never joins) within one second, and leaves nothing behind: the
 * process has the file descriptors, threads and shared-memory mappings it
 * had before the communicator. Rounds repeat it to catch what one misses.
 *
 *   test_fault_abort ROUNDS   (NCCL_SHM_DISABLE=1 makes it cross the net) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "nccl.h"
#include "proc_count.h"
#include "ranks_id.h"

#define COUNT (64 * 1024)

typedef struct {
  volatile int rank0Done;
} round_t;

typedef struct {
  ncclComm_t comm;
  float* buf;
  ncclResult_t res;
  double returnedAt;
} stuck_t;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void* stuck_main(void* arg) {
  stuck_t* s = arg;
  s->res = ncclAllReduce(s->buf, s->buf, COUNT, ncclFloat, ncclSum, s->comm, NULL);
  s->returnedAt = now_s();
  return NULL;
}

static int rank_main(int rank, int n, void* arg) {
  round_t* r = arg;
  int fds0 = proc_count_fds(), threads0 = proc_count_threads();
  ncclComm_t comm = ranks_comm_init(rank, n); /* made after the baseline: rank 0 runs the root until init joins it */
  float* buf = calloc(COUNT, sizeof(float));
  CHECK(buf);
  CHECK_NCCL(ncclAllReduce(buf, buf, COUNT, ncclFloat, ncclSum, comm, NULL)); /* connections are up */
  if (rank != 0) {
    /* Never joins the second collective: rank 0 is stuck until it aborts. */
    for (int i = 0; i < 30000 && !r->rank0Done; i++) usleep(1000);
    CHECK_NCCL(ncclCommAbort(comm));
    free(buf);
    return 0;
  }
  CHECK(proc_count_shm_mappings() > 0 || getenv("NCCL_SHM_DISABLE"));
  stuck_t s = {comm, buf, ncclSuccess, 0};
  pthread_t t;
  CHECK(pthread_create(&t, NULL, stuck_main, &s) == 0);
  usleep(300 * 1000);
  CHECK_MSG(s.returnedAt == 0, "the collective returned %d before the abort", (int)s.res);
  double abortAt = now_s();
  CHECK_NCCL(ncclCommAbort(comm));
  double abortDone = now_s();
  CHECK(pthread_join(t, NULL) == 0);
  r->rank0Done = 1;
  CHECK_MSG(s.res != ncclSuccess && s.res != ncclInProgress, "the stuck collective returned %d", (int)s.res);
  CHECK_MSG(s.returnedAt - abortAt < 1.0, "the stuck collective returned %.3f s after the abort",
            s.returnedAt - abortAt);
  printf("stuck collective returned %s %.3f s after ncclCommAbort (abort took %.3f s)\n", ncclGetErrorString(s.res),
         s.returnedAt - abortAt, abortDone - abortAt);
  free(buf);
  CHECK_EQ_INT(proc_count_fds(), fds0);
  CHECK_EQ_INT(proc_count_threads(), threads0);
  CHECK_EQ_INT(proc_count_shm_mappings(), 0);
  return 0;
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  for (int k = 0; k < rounds; k++) {
    round_t* r = ranks_shared_alloc(sizeof(round_t));
    CHECK(r);
    CHECK_EQ_INT(ranks_run(2, rank_main, r, 120), 0);
  }
  printf("%d round(s): abort unblocked the stuck rank in time, nothing left behind\n", rounds);
  return 0;
}
