/* ncclCommFinalize and ncclCommDestroy with proxy ops still queued to a peer
 * that died or stopped: the flush gives up after MKCCL_TIMEOUT without
 * progress (or sooner, when the net reports the peer gone), drops the ops,
 * returns an error (async error set), and destroy still frees everything:
 * the process has the fds and threads it had before the communicator.
 *
 * Rank 0 posts a group of Sends to rank 1 that fit in the connection buffer
 * but not in the sockets' buffers, so ncclGroupEnd returns with the proxy
 * still sending; rank 1 never receives. Then rank 1 is SIGKILLed ("kill",
 * before the flush) or left stopped ("stuck": alive, reading nothing,
 * SIGKILLed after the flush), and rank 0 calls ncclCommFinalize then
 * ncclCommDestroy, or ncclCommDestroy alone.
 *
 *   test_fault_destroy kill|stuck   (sets NCCL_SHM_DISABLE, MKCCL_TIMEOUT,
 *                                    NCCL_BUFFSIZE and the socket counts) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
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

#define TIMEOUT_S 2 /* MKCCL_TIMEOUT for this test */
#define SLACK_S 4   /* teardown and scheduling on a loaded 2-core machine */
/* The sends must fit the connection buffer but not what the sockets can
 * hold (one socket here; on Linux up to tcp_wmem + tcp_rmem maxima, 4 + 32
 * MiB on the test machine): else they complete into the kernel. */
#define BUFFSIZE (128 << 20)
#define NSENDS 3
/* p2p chunks are one step (BUFFSIZE / 8 = 16 MiB) and each send starts at a
 * step: 3 x 2 steps of the 8, so the executor never waits for one back. */
#define SEND_FLOATS ((size_t)8 << 20) /* 32 MiB each, 96 MiB in all */

typedef struct {
  int kill;      /* kill the victim before the flush (else after) */
  int finalize;  /* ncclCommFinalize, then ncclCommDestroy; else destroy alone */
  volatile pid_t victimPid;
  volatile int victimReady;
  volatile int survivorDone;
} round_t;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void kill_victim(round_t* r) {
  CHECK(r->victimPid > 0);
  CHECK(kill(r->victimPid, SIGKILL) == 0);
}

static int rank_main(int rank, int n, void* arg) {
  round_t* r = arg;
  int fds0 = proc_count_fds(), threads0 = proc_count_threads();
  ncclComm_t comm = ranks_comm_init(rank, n); /* made after the baseline: rank 0 runs the root until init joins it */
  float* buf = calloc(NSENDS * SEND_FLOATS, sizeof(float));
  CHECK(buf);
  CHECK_NCCL(ncclAllReduce(buf, buf, 1024, ncclFloat, ncclSum, comm, NULL));
  /* The same group once with the receives, so the p2p connections are up
   * (they are made on first use, through the peer). */
  CHECK_NCCL(ncclGroupStart());
  for (int i = 0; i < NSENDS; i++) {
    float* b = buf + (size_t)i * SEND_FLOATS;
    if (rank == 0) CHECK_NCCL(ncclSend(b, SEND_FLOATS, ncclFloat, 1, comm, NULL));
    else CHECK_NCCL(ncclRecv(b, SEND_FLOATS, ncclFloat, 0, comm, NULL));
  }
  CHECK_NCCL(ncclGroupEnd());
  if (rank == 1) {
    /* The victim: never receives; killed by rank 0. */
    r->victimPid = getpid();
    __atomic_store_n(&r->victimReady, 1, __ATOMIC_SEQ_CST);
    for (int i = 0; i < 120000 && !r->survivorDone; i++) usleep(1000);
    fprintf(stderr, "victim: not killed\n");
    return 1;
  }
  while (!__atomic_load_n(&r->victimReady, __ATOMIC_SEQ_CST)) usleep(1000);
  CHECK_NCCL(ncclGroupStart());
  for (int i = 0; i < NSENDS; i++)
    CHECK_NCCL(ncclSend(buf + (size_t)i * SEND_FLOATS, SEND_FLOATS, ncclFloat, 1, comm, NULL));
  ncclResult_t gres = ncclGroupEnd();
  CHECK_MSG(gres == ncclSuccess, "ncclGroupEnd returned %s: %s (the sends should fit the connection buffer)",
            ncclGetErrorString(gres), ncclGetLastError(comm));
  usleep(100 * 1000); /* the proxy fills the sockets' buffers */
  if (r->kill) kill_victim(r);
  double t0 = now_s();
  ncclResult_t res;
  const char* what = r->finalize ? "ncclCommFinalize" : "ncclCommDestroy";
  if (r->finalize) {
    res = ncclCommFinalize(comm);
    double took = now_s() - t0;
    ncclResult_t async = ncclSuccess;
    CHECK_NCCL(ncclCommGetAsyncError(comm, &async));
    printf("%s: %s after %.2f s (async error %s): %s\n", what, ncclGetErrorString(res), took,
           ncclGetErrorString(async), ncclGetLastError(comm));
    CHECK_MSG(res == ncclRemoteError || res == ncclSystemError, "%s returned %d", what, (int)res);
    CHECK_MSG(async == res, "async error %d, not the finalize result %d", (int)async, (int)res);
    CHECK_MSG(took <= TIMEOUT_S + SLACK_S, "%s took %.2f s", what, took);
    double t1 = now_s();
    CHECK_NCCL(ncclCommDestroy(comm));
    CHECK_MSG(now_s() - t1 < 1.0, "ncclCommDestroy after the finalize took %.2f s", now_s() - t1);
  } else {
    res = ncclCommDestroy(comm);
    double took = now_s() - t0;
    printf("%s: %s after %.2f s\n", what, ncclGetErrorString(res), took);
    CHECK_MSG(res == ncclRemoteError || res == ncclSystemError, "%s returned %d", what, (int)res);
    CHECK_MSG(took <= TIMEOUT_S + SLACK_S, "%s took %.2f s", what, took);
  }
  if (!r->kill) kill_victim(r);
  r->survivorDone = 1;
  free(buf);
  CHECK_EQ_INT(proc_count_fds(), fds0);
  CHECK_EQ_INT(proc_count_threads(), threads0);
  return 0;
}

int main(int argc, char** argv) {
  int kill = argc > 1 && strcmp(argv[1], "kill") == 0;
  char v[32];
  snprintf(v, sizeof(v), "%d", TIMEOUT_S);
  setenv("MKCCL_TIMEOUT", v, 1);
  snprintf(v, sizeof(v), "%d", BUFFSIZE);
  setenv("NCCL_BUFFSIZE", v, 1);
  setenv("NCCL_SHM_DISABLE", "1", 1);
  setenv("NCCL_SOCKET_NTHREADS", "1", 1);
  setenv("NCCL_NSOCKS_PERTHREAD", "1", 1);
  for (int finalize = 1; finalize >= 0; finalize--) {
    round_t* r = ranks_shared_alloc(sizeof(round_t));
    CHECK(r);
    r->kill = kill;
    r->finalize = finalize;
    printf("round: victim %s, survivor calls %s\n", kill ? "killed before the flush" : "stuck during the flush",
           finalize ? "ncclCommFinalize + ncclCommDestroy" : "ncclCommDestroy");
    int status[2];
    CHECK_EQ_INT(ranks_run_status(2, rank_main, r, 60, status), 0);
    CHECK_MSG(status[0] == 0, "rank 0 ended with %d", status[0]);
    CHECK_EQ_INT(status[1], -SIGKILL);
  }
  printf("flush of finalize/destroy bounded, nothing left behind\n");
  return 0;
}
