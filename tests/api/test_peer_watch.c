/* Dead and departed peers with default settings (MKCCL_TIMEOUT at its
 * default): every survivor's call returns ncclRemoteError within 2 s of the
 * event, its async error is set, and the last-error text names the rank,
 * its host and its pid. A rank that completed its work and exits without
 * ncclCommDestroy fails nobody.
 *
 *   test_peer_watch MODE ROUNDS [hosts]   (transports follow the environment:
 *                                  NCCL_SHM_DISABLE=1 forces the net;
 *                                  hosts: rank 0 on one "host", ranks 1
 *                                  and 2 on another, two network
 *                                  namespaces joined by a veth pair)
 *   kill   a rank SIGKILLed in a loop of 64 MB AllReduces
 *   p2p    a rank SIGKILLed in a ring of 1 MB sends and receives
 *   idle   a rank SIGKILLed while the others are between calls
 *   leave  a rank calls ncclCommDestroy one collective before the others
 *   exit   a rank exits (no destroy) after its last collective: no error
 *   sendleave  a rank sends two messages to the next rank and one to the
 *          previous, then destroys its comm: the receivers take every
 *          message it sent, whether they call ncclRecv before it leaves or
 *          after, and the one receive more each calls fails
 *   sendexit  the same with 1 MB messages and exit(0) instead of destroy */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "nccl.h"
#include "netns.h"
#include "ranks_id.h"

#define NRANKS 3
#define BOUND_S 2.0 /* the promise: an error within 2 s of the event */

typedef struct {
  int mode;
  int victim;
  int delayMs;
  int iters; /* leave, exit: collectives every rank runs */
  volatile int victimPid;
  char victimHost[64];
  volatile int64_t eventNs;
  int entered; /* sendleave: receivers about to call the receive never sent */
} round_t;

static netns_pair_t nsp;
static int two_hosts;

enum { MODE_KILL, MODE_P2P, MODE_IDLE, MODE_LEAVE, MODE_EXIT, MODE_SENDLEAVE, MODE_SENDEXIT };
static const char* const mode_names[] = {"kill", "p2p", "idle", "leave", "exit", "sendleave", "sendexit"};

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void* killer(void* arg) {
  round_t* r = arg;
  usleep((useconds_t)r->delayMs * 1000);
  r->eventNs = now_ns();
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  raise(SIGKILL);
  return NULL;
}

/* The victim, after its first good call: dies delayMs later, mid-run. */
static int start_killer(round_t* r) {
  r->victimPid = (int)getpid();
  gethostname(r->victimHost, sizeof(r->victimHost) - 1);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, killer, r) == 0);
  return 0;
}

/* A survivor's failed call: the right code, in time, and a text naming the
 * victim's rank, host and pid. In time: from the event or from the call's
 * start, whichever is later (a rank still checking the last result when
 * the peer died learns of it at its next call, at once). */
static int check_failure(int rank, ncclComm_t comm, ncclResult_t res, const round_t* r, const char* what,
                         int64_t calledNs) {
  int64_t at = now_ns();
  CHECK_MSG(res == ncclRemoteError, "rank %d: %s returned %d (%s), not ncclRemoteError: %s", rank, what, (int)res,
            ncclGetErrorString(res), ncclGetLastError(comm));
  ncclResult_t async = ncclSuccess;
  CHECK_NCCL(ncclCommGetAsyncError(comm, &async));
  CHECK_MSG(async == ncclRemoteError, "rank %d: async error %d, not ncclRemoteError", rank, (int)async);
  CHECK_MSG(r->eventNs > 0, "rank %d failed before the event: %s", rank, ncclGetLastError(comm));
  double after = (double)(at - (calledNs > r->eventNs ? calledNs : r->eventNs)) / 1e9;
  char want[160];
  snprintf(want, sizeof(want), "rank %d (host %s, pid %d)", r->victim, r->victimHost, r->victimPid);
  const char* text = ncclGetLastError(comm);
  printf("rank %d: %s failed %.3f s after the event: %s\n", rank, what, after, text);
  CHECK_MSG(strstr(text, want), "rank %d: the error does not name '%s': %s", rank, want, text);
  CHECK_MSG(after <= BOUND_S, "rank %d took %.2f s to fail (bound %.1f s)", rank, after, BOUND_S);
  /* A WARN after the failure (here a bad argument; over sockets a helper
   * thread's account of the closed connection) is the process's last
   * error, but the communicator's stays its failure. */
  CHECK_EQ_INT(ncclGetVersion(NULL), ncclInvalidArgument);
  CHECK_MSG(strstr(ncclGetLastError(NULL), "version is NULL"), "rank %d: the process's last error: %s", rank,
            ncclGetLastError(NULL));
  CHECK_MSG(strstr(ncclGetLastError(comm), want), "rank %d: after a later WARN the comm's error does not name '%s': %s",
            rank, want, ncclGetLastError(comm));
  return 0;
}

static void fill(float* v, size_t n, int rank, int it) {
  for (size_t i = 0; i < n; i++) v[i] = (float)((rank + 1) * 1000 + (int)(i % 13) + it % 5);
}

static int check_sum(const float* v, size_t n, int nranks, int it, int rank) {
  for (size_t i = 0; i < n; i++) {
    float want = 0;
    for (int q = 0; q < nranks; q++) want += (float)((q + 1) * 1000 + (int)(i % 13) + it % 5);
    CHECK_MSG(v[i] == want, "rank %d iteration %d: element %zu is %g, not %g", rank, it, i, (double)v[i], (double)want);
  }
  return 0;
}

static int run_allreduce(int rank, int n, round_t* r, ncclComm_t comm, size_t count) {
  float* in = malloc(count * sizeof(float));
  float* out = malloc(count * sizeof(float));
  CHECK(in && out);
  for (int it = 0;; it++) {
    fill(in, count, rank, it);
    int64_t called = now_ns();
    ncclResult_t res = ncclAllReduce(in, out, count, ncclFloat, ncclSum, comm, NULL);
    if (res != ncclSuccess) {
      CHECK(check_failure(rank, comm, res, r, "ncclAllReduce", called) == 0);
      break;
    }
    CHECK(check_sum(out, count, n, it, rank) == 0);
    if (rank == r->victim && it == 0) CHECK(start_killer(r) == 0);
  }
  free(in), free(out);
  return 0;
}

/* Each rank sends to the next and receives from the previous. */
static int run_p2p(int rank, int n, round_t* r, ncclComm_t comm) {
  size_t count = 256 * 1024;
  float* in = malloc(count * sizeof(float));
  float* out = malloc(count * sizeof(float));
  CHECK(in && out);
  int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  for (int it = 0;; it++) {
    fill(in, count, rank, it);
    int64_t called = now_ns();
    ncclResult_t res = ncclGroupStart();
    if (res == ncclSuccess) res = ncclSend(in, count, ncclFloat, next, comm, NULL);
    if (res == ncclSuccess) res = ncclRecv(out, count, ncclFloat, prev, comm, NULL);
    ncclResult_t end = ncclGroupEnd();
    if (res == ncclSuccess) res = end;
    if (res != ncclSuccess) {
      CHECK(check_failure(rank, comm, res, r, "ncclSend/ncclRecv", called) == 0);
      break;
    }
    for (size_t i = 0; i < count; i++) {
      float want = (float)((prev + 1) * 1000 + (int)(i % 13) + it % 5);
      CHECK_MSG(out[i] == want, "rank %d iteration %d: element %zu is %g, not %g", rank, it, i, (double)out[i],
                (double)want);
    }
    if (rank == r->victim && it == 0) CHECK(start_killer(r) == 0);
  }
  free(in), free(out);
  return 0;
}

/* One AllReduce, then the victim dies while the others wait 500 ms; their
 * next call fails at once. */
static int run_idle(int rank, int n, round_t* r, ncclComm_t comm) {
  float in[64], out[64];
  fill(in, 64, rank, 0);
  CHECK_NCCL(ncclAllReduce(in, out, 64, ncclFloat, ncclSum, comm, NULL));
  CHECK(check_sum(out, 64, n, 0, rank) == 0);
  if (rank == r->victim) {
    r->victimPid = (int)getpid();
    gethostname(r->victimHost, sizeof(r->victimHost) - 1);
    r->delayMs = 0;
    killer(r);
  }
  usleep(500 * 1000);
  int64_t called = now_ns();
  ncclResult_t res = ncclAllReduce(in, out, 64, ncclFloat, ncclSum, comm, NULL);
  CHECK(check_failure(rank, comm, res, r, "ncclAllReduce after the death", called) == 0);
  return 0;
}

/* leave: the victim runs one collective fewer and destroys its comm (its
 * goodbye says how many it completed); exit: the victim runs them all and
 * exits without destroying, and the others finish theirs unharmed. */
static int run_depart(int rank, int n, round_t* r, ncclComm_t comm) {
  size_t count = 1 << 20;
  float* in = malloc(count * sizeof(float));
  float* out = malloc(count * sizeof(float));
  CHECK(in && out);
  int mine = r->iters - (r->mode == MODE_LEAVE && rank == r->victim);
  for (int it = 0; it < mine; it++) {
    fill(in, count, rank, it);
    if (rank == r->victim && it == mine - 1) {
      r->victimPid = (int)getpid();
      gethostname(r->victimHost, sizeof(r->victimHost) - 1);
    }
    int64_t called = now_ns();
    ncclResult_t res = ncclAllReduce(in, out, count, ncclFloat, ncclSum, comm, NULL);
    if (res != ncclSuccess) {
      CHECK_MSG(r->mode == MODE_LEAVE && it == r->iters - 1, "rank %d iteration %d of %d: %s", rank, it, r->iters,
                ncclGetLastError(comm));
      CHECK(check_failure(rank, comm, res, r, "the collective the leaver skipped", called) == 0);
      CHECK_MSG(strstr(ncclGetLastError(comm), "left the communicator"), "rank %d: not a departure: %s", rank,
                ncclGetLastError(comm));
      free(in), free(out);
      CHECK_NCCL(ncclCommAbort(comm));
      return 0;
    }
    CHECK(check_sum(out, count, n, it, rank) == 0);
  }
  free(in), free(out);
  if (rank == r->victim) {
    r->eventNs = now_ns();
    if (r->mode == MODE_EXIT) exit(0); /* no destroy: the library says goodbye at exit */
    CHECK_NCCL(ncclCommDestroy(comm));
    return 0;
  }
  CHECK_MSG(r->mode == MODE_EXIT, "rank %d: the collective after the leaver's last succeeded", rank);
  usleep(200 * 1000); /* the victim is gone: nothing this rank still waits on needs it */
  ncclResult_t async = ncclSuccess;
  CHECK_NCCL(ncclCommGetAsyncError(comm, &async));
  CHECK_MSG(async == ncclSuccess, "rank %d: a clean exit of rank %d failed the communicator: %s", rank, r->victim,
            ncclGetLastError(comm));
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

/* sendleave and sendexit: message idx from rank src, every element apart. */
static void sl_fill(int32_t* v, int count, int src, int idx) {
  for (int i = 0; i < count; i++) v[i] = src * 100000000 + idx * 10000000 + i;
}

static int sl_check(const int32_t* v, int count, int src, int idx, int rank) {
  for (int i = 0; i < count; i++)
    CHECK_MSG(v[i] == src * 100000000 + idx * 10000000 + i, "rank %d: message %d from rank %d: element %d is %d", rank,
              idx, src, i, (int)v[i]);
  return 0;
}

/* Waits up to 10 s for *flag to reach want. */
static int sl_wait(volatile int64_t* flag, int64_t want) {
  for (int i = 0; i < 10000 && __atomic_load_n(flag, __ATOMIC_ACQUIRE) < want; i++) usleep(1000);
  return __atomic_load_n(flag, __ATOMIC_ACQUIRE) >= want;
}

/* Odd rounds: the receivers call ncclRecv before the victim leaves, the
 * last one unmatched (the goodbye must end it); even rounds: after it left
 * (each call is checked against the sends the goodbye counted). sendleave:
 * 64 KB messages, then ncclCommDestroy; sendexit: 1 MB messages, larger
 * than the sockets hold, so some are still queued to the victim's proxy
 * when its ncclSend returns, then exit(0) without destroy: what the
 * library queued must still leave. */
static int run_sendleave(int rank, int n, round_t* r, ncclComm_t comm, int early) {
  int v = r->victim, next = (v + 1) % n, prev = (v + n - 1) % n;
  int count = r->mode == MODE_SENDEXIT ? 262144 : 16384;
  int32_t* buf = malloc((size_t)count * sizeof(int32_t));
  int32_t* got = malloc(2 * (size_t)count * sizeof(int32_t));
  CHECK(buf && got);
  /* Both ways around the ring first: connections are made when both ends
   * call, and the victim's later sends must not wait for its receivers. */
  int up = (rank + 1) % n, down = (rank + n - 1) % n;
  sl_fill(buf, count, rank, 7);
  CHECK_NCCL(ncclGroupStart());
  CHECK_NCCL(ncclSend(buf, count, ncclInt32, up, comm, NULL));
  CHECK_NCCL(ncclSend(buf, count, ncclInt32, down, comm, NULL));
  CHECK_NCCL(ncclRecv(got, count, ncclInt32, down, comm, NULL));
  CHECK_NCCL(ncclRecv(got + count, count, ncclInt32, up, comm, NULL));
  CHECK_NCCL(ncclGroupEnd());
  CHECK(sl_check(got, count, down, 7, rank) == 0);
  CHECK(sl_check(got + count, count, up, 7, rank) == 0);
  free(got);
  if (rank == v) {
    r->victimPid = (int)getpid();
    gethostname(r->victimHost, sizeof(r->victimHost) - 1);
    for (int idx = 0; idx < 2; idx++) {
      sl_fill(buf, count, rank, idx);
      CHECK_NCCL(ncclSend(buf, count, ncclInt32, next, comm, NULL));
    }
    sl_fill(buf, count, rank, 0);
    CHECK_NCCL(ncclSend(buf, count, ncclInt32, prev, comm, NULL));
    if (early) {
      int64_t entered = 0;
      for (int i = 0; i < 10000 && entered < 2; i++, usleep(1000)) entered = __atomic_load_n(&r->entered, __ATOMIC_ACQUIRE);
      CHECK_MSG(entered == 2, "the receivers did not take the victim's messages within 10 s");
      usleep(100 * 1000); /* they are inside the receive never sent */
    }
    free(buf);
    r->eventNs = now_ns();
    if (r->mode == MODE_SENDEXIT) exit(0); /* no destroy: the library's exit handling */
    CHECK_NCCL(ncclCommDestroy(comm));
    return 0;
  }
  int mine = rank == next ? 2 : 1;
  if (!early) {
    CHECK_MSG(sl_wait(&r->eventNs, 1), "rank %d: the victim did not leave within 10 s", rank);
    usleep(300 * 1000); /* its goodbye has come */
  }
  for (int idx = 0; idx < mine; idx++) {
    memset(buf, 0xff, (size_t)count * sizeof(int32_t));
    ncclResult_t res = ncclRecv(buf, count, ncclInt32, v, comm, NULL);
    CHECK_MSG(res == ncclSuccess, "rank %d: receive %d of %d sent by rank %d before it left: %s", rank, idx + 1, mine, v,
              ncclGetLastError(comm));
    CHECK(sl_check(buf, count, v, idx, rank) == 0);
  }
  /* Both receivers have their messages before either fails the comm. */
  __atomic_add_fetch(&r->entered, 1, __ATOMIC_RELEASE);
  for (int i = 0; i < 10000 && __atomic_load_n(&r->entered, __ATOMIC_ACQUIRE) < 2; i++) usleep(1000);
  int64_t called = now_ns();
  ncclResult_t res = ncclRecv(buf, count, ncclInt32, v, comm, NULL);
  free(buf);
  CHECK(check_failure(rank, comm, res, r, "the receive the leaver never sent", called) == 0);
  CHECK_MSG(strstr(ncclGetLastError(comm), "left the communicator"), "rank %d: not a departure: %s", rank,
            ncclGetLastError(comm));
  CHECK_NCCL(ncclCommAbort(comm));
  return 0;
}

static int rank_main(int rank, int n, void* arg) {
  round_t* r = arg;
  if (two_hosts) CHECK(netns_enter(&nsp, rank > 0, rank > 0 ? "mkccl-watch-b" : "mkccl-watch-a") == 0);
  ncclComm_t comm = ranks_comm_init(rank, n);
  int rc;
  switch (r->mode) {
    case MODE_KILL: rc = run_allreduce(rank, n, r, comm, 16u << 20); break; /* 64 MB of floats */
    case MODE_P2P: rc = run_p2p(rank, n, r, comm); break;
    case MODE_IDLE: rc = run_idle(rank, n, r, comm); break;
    case MODE_SENDLEAVE:
    case MODE_SENDEXIT: return run_sendleave(rank, n, r, comm, r->iters % 2);
    default: return run_depart(rank, n, r, comm); /* ends or aborts its comm itself */
  }
  CHECK_NCCL(ncclCommAbort(comm));
  return rc;
}

int main(int argc, char** argv) {
  int mode = -1;
  for (int m = 0; m <= MODE_SENDEXIT && argc > 1; m++)
    if (strcmp(argv[1], mode_names[m]) == 0) mode = m;
  CHECK_MSG(mode >= 0, "usage: test_peer_watch kill|p2p|idle|leave|exit|sendleave|sendexit [ROUNDS] [hosts]");
  int rounds = argc > 2 ? atoi(argv[2]) : 2;
  two_hosts = argc > 3 && strcmp(argv[3], "hosts") == 0;
  if (two_hosts) netns_require(&nsp);
  CHECK_MSG(!getenv("MKCCL_TIMEOUT"), "MKCCL_TIMEOUT is set: this test checks the default settings");
  srand((unsigned)time(NULL));
  for (int k = 0; k < rounds; k++) {
    round_t* r = ranks_shared_alloc(sizeof(round_t));
    CHECK(r);
    r->mode = mode;
    r->victim = k % NRANKS;
    r->delayMs = 5 + rand() % 300;
    r->iters = 3 + k % 3;
    printf("round %d: %s, rank %d\n", k, mode_names[mode], r->victim);
    fflush(stdout);
    int status[NRANKS];
    int ran = ranks_run_status(NRANKS, rank_main, r, 60, status);
    if (ran != 0 && two_hosts) netns_pair_destroy(&nsp);
    CHECK_EQ_INT(ran, 0);
    int killed = mode <= MODE_IDLE;
    for (int i = 0; i < NRANKS; i++) {
      if (i == r->victim && killed) CHECK_EQ_INT(status[i], -SIGKILL);
      else CHECK_MSG(status[i] == 0, "rank %d ended with %d", i, status[i]);
    }
  }
  if (two_hosts) netns_pair_destroy(&nsp);
  printf("%d round(s) of %s: every survivor failed in time, naming the rank, or went on unharmed\n", rounds,
         mode_names[mode]);
  return 0;
}
