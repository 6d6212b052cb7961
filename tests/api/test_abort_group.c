/* ncclCommAbort of a communicator whose operations sit queued in an open
 * group (ncclGroupStart called, ncclGroupEnd not yet):
 * - own: the aborting thread's own group queued them; the abort drops
 *   them and returns at once (no wait for itself), and the group then
 *   ends with nothing to run;
 * - other: another thread's group queued them; the abort waits for that
 *   thread up to MKCCL_ABORT_WAIT_MS, returns, and leaves the comm to it:
 *   its ncclGroupEnd fails with ncclInvalidUsage saying the comm was
 *   aborted, on memory still valid (under ASan a use after free fails).
 *   The wait itself shows the comm counted as inside: without that the
 *   abort returns at once and frees it under the queued tasks.
 * Both on every rank, with two ranks as processes.
 *
 *   test_abort_group */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "nccl.h"
#include "ranks_id.h"

#define COUNT 4096
#define ABORT_WAIT_MS 400

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Every rank past the same point: the abort's goodbye would otherwise fail
 * a peer's call still to be queued (its neighbour left before it). */
static volatile int* phase;

static void ranks_barrier(int n) {
  int mine = __atomic_add_fetch(phase, 1, __ATOMIC_ACQ_REL);
  int target = (mine + n - 1) / n * n;
  while (__atomic_load_n(phase, __ATOMIC_ACQUIRE) < target) usleep(500);
}

static void case_own(int rank, int n) {
  ncclComm_t comm = ranks_comm_init(rank, n);
  float* buf = calloc(COUNT, sizeof(float));
  CHECK(buf);
  CHECK_NCCL(ncclGroupStart());
  CHECK_NCCL(ncclAllReduce(buf, buf, COUNT, ncclFloat, ncclSum, comm, NULL));
  ranks_barrier(n);
  double t0 = now_ms();
  CHECK_NCCL(ncclCommAbort(comm));
  double took = now_ms() - t0;
  CHECK_MSG(took < ABORT_WAIT_MS / 2, "rank %d: aborting a comm queued in its own group took %.1f ms", rank, took);
  CHECK_NCCL(ncclGroupEnd()); /* nothing left to run */
  printf("rank %d own: abort %.1f ms, the group ended empty\n", rank, took);
  free(buf);
}

typedef struct {
  ncclComm_t comm;
  float* buf;
  volatile int queued, aborted;
  ncclResult_t endRes;
  char endText[512];
} other_t;

static void* other_main(void* arg) {
  other_t* o = arg;
  CHECK_NCCL(ncclGroupStart());
  CHECK_NCCL(ncclAllReduce(o->buf, o->buf, COUNT, ncclFloat, ncclSum, o->comm, NULL));
  __atomic_store_n(&o->queued, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&o->aborted, __ATOMIC_ACQUIRE)) usleep(1000);
  o->endRes = ncclGroupEnd();
  snprintf(o->endText, sizeof(o->endText), "%s", ncclGetLastError(NULL));
  return NULL;
}

static void case_other(int rank, int n) {
  other_t o;
  memset(&o, 0, sizeof(o));
  o.comm = ranks_comm_init(rank, n);
  o.buf = calloc(COUNT, sizeof(float));
  CHECK(o.buf);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, other_main, &o) == 0);
  while (!__atomic_load_n(&o.queued, __ATOMIC_ACQUIRE)) usleep(1000);
  ranks_barrier(n);
  double t0 = now_ms();
  CHECK_NCCL(ncclCommAbort(o.comm));
  double took = now_ms() - t0;
  __atomic_store_n(&o.aborted, 1, __ATOMIC_RELEASE);
  CHECK(pthread_join(t, NULL) == 0);
  CHECK_MSG(took >= ABORT_WAIT_MS && took < ABORT_WAIT_MS + 2000,
            "rank %d: the abort took %.1f ms; a comm queued in another thread's group must be waited for %d ms", rank,
            took, ABORT_WAIT_MS);
  CHECK_MSG(o.endRes == ncclInvalidUsage, "rank %d: ncclGroupEnd after the abort returned %d (%s)", rank,
            (int)o.endRes, o.endText);
  /* The last-error text is the process's: the peer watch may have put its
   * account of the peer's abort there since. */
  CHECK_MSG(strstr(o.endText, "aborted"), "rank %d: ncclGroupEnd's error: %s", rank, o.endText);
  printf("rank %d other: abort %.1f ms, ncclGroupEnd: %s\n", rank, took, o.endText);
  free(o.buf);
}

static int rank_main(int rank, int n, void* arg) {
  (void)arg;
  case_own(rank, n);
  case_other(rank, n);
  return 0;
}

int main(void) {
  char wait[16];
  snprintf(wait, sizeof(wait), "%d", ABORT_WAIT_MS);
  setenv("MKCCL_ABORT_WAIT_MS", wait, 1);
  phase = ranks_shared_alloc(sizeof(int));
  CHECK(phase);
  CHECK_EQ_INT(ranks_run(2, rank_main, NULL, 120), 0);
  printf("abort_group: ok\n");
  return 0;
}
