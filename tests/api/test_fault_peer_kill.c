/* A rank SIGKILLed in the middle of a collective: every other rank's call
 * returns ncclRemoteError or ncclSystemError, with the communicator's async
 * error set, within MKCCL_TIMEOUT (plus slack) of the kill; never a hang,
 * never a wrong result returned as success. Each round kills another rank
 * at another point of a long run of AllReduces.
 *
 *   test_fault_peer_kill ROUNDS   (transports follow the environment:
 *                                  NCCL_SHM_DISABLE=1 forces the net) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "nccl.h"
#include "ranks_id.h"

#define NRANKS 4
#define COUNT (256 * 1024)
#define ITERS 100000 /* far more than fit before the kill */
#define TIMEOUT_S 2  /* MKCCL_TIMEOUT for this test */
#define SLACK_S 4    /* teardown and scheduling on a loaded 2-core machine */

typedef struct {
  int victim;
  int delayMs;           /* after the victim's first good collective */
  volatile int64_t killNs;
  volatile int good[NRANKS]; /* collectives that succeeded (all checked) */
} round_t;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts); /* one clock for every process of the host */
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void* killer(void* arg) {
  round_t* r = arg;
  usleep((useconds_t)r->delayMs * 1000);
  r->killNs = now_ns();
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  raise(SIGKILL);
  return NULL;
}

static int rank_main(int rank, int n, void* arg) {
  round_t* r = arg;
  ncclComm_t comm = ranks_comm_init(rank, n);
  float* in = malloc(COUNT * sizeof(float));
  float* out = malloc(COUNT * sizeof(float));
  CHECK(in && out);
  for (int i = 0; i < COUNT; i++) in[i] = (float)(rank + 1 + i % 7);
  for (int it = 0; it < ITERS; it++) {
    ncclResult_t res = ncclAllReduce(in, out, COUNT, ncclFloat, ncclSum, comm, NULL);
    if (res != ncclSuccess) {
      int64_t at = now_ns();
      CHECK_MSG(rank != r->victim, "the victim failed before it was killed: %s", ncclGetLastError(comm));
      CHECK_MSG(res == ncclRemoteError || res == ncclSystemError, "rank %d: result %d (%s)", rank, (int)res,
                ncclGetErrorString(res));
      ncclResult_t async = ncclSuccess;
      CHECK_NCCL(ncclCommGetAsyncError(comm, &async));
      CHECK_MSG(async != ncclSuccess && async != ncclInProgress, "rank %d: async error not set (%d)", rank, (int)async);
      CHECK_MSG(r->killNs > 0, "rank %d failed before the kill: %s", rank, ncclGetLastError(comm));
      double after = (double)(at - r->killNs) / 1e9;
      printf("rank %d: error %s %.2f s after the kill of rank %d, %d good collectives: %s\n", rank,
             ncclGetErrorString(res), after, r->victim, r->good[rank], ncclGetLastError(comm));
      CHECK_MSG(after <= TIMEOUT_S + SLACK_S, "rank %d took %.2f s to fail", rank, after);
      CHECK_NCCL(ncclCommAbort(comm));
      free(in), free(out);
      return 0;
    }
    for (int i = 0; i < COUNT; i++) {
      float want = (float)(n * (n + 1) / 2 + n * (i % 7));
      CHECK_MSG(out[i] == want, "rank %d iteration %d: element %d is %g, not %g (returned as success)", rank, it, i,
                (double)out[i], (double)want);
    }
    r->good[rank]++;
    if (rank == r->victim && it == 0) {
      pthread_t t;
      CHECK(pthread_create(&t, NULL, killer, r) == 0);
    }
  }
  fprintf(stderr, "rank %d: %d collectives and no error\n", rank, ITERS);
  return 1;
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 2;
  char timeout[16];
  snprintf(timeout, sizeof(timeout), "%d", TIMEOUT_S);
  setenv("MKCCL_TIMEOUT", timeout, 1);
  srand((unsigned)time(NULL));
  for (int k = 0; k < rounds; k++) {
    round_t* r = ranks_shared_alloc(sizeof(round_t));
    CHECK(r);
    r->victim = 1 + k % (NRANKS - 1);
    r->delayMs = 5 + rand() % 200; /* a random point of the run */
    printf("round %d: rank %d killed %d ms after its first collective\n", k, r->victim, r->delayMs);
    int status[NRANKS];
    CHECK_EQ_INT(ranks_run_status(NRANKS, rank_main, r, 120, status), 0);
    for (int i = 0; i < NRANKS; i++) {
      if (i == r->victim) CHECK_EQ_INT(status[i], -SIGKILL);
      else CHECK_MSG(status[i] == 0, "rank %d ended with %d", i, status[i]);
    }
  }
  printf("%d round(s): every survivor failed in time, no wrong result\n", rounds);
  return 0;
}
