/* mkccl-info --status on a live job: three ranks, one of which stops
 * calling. While the other two wait in their next AllReduce, the lagging
 * rank asks mkccl-info (through a pipe, as a user would from a shell) and
 * checks that the answer names it, with its host and pid, as the rank the
 * others wait for, that the others show as in the AllReduce, and that
 * asking one process by pid gathers the same. Then it joins and every
 * rank checks the result. A second pass stops another rank. A third
 * stops rank 1 from outside (SIGSTOP, sent by rank 0): the status must say
 * it does not answer, and once continued (SIGCONT) the job goes on.
 *
 *   test_peer_status MKCCL_INFO_BINARY */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "nccl.h"
#include "ranks_id.h"

#define NRANKS 3
#define COUNT 4096
#define LAPS 4

typedef struct {
  const char* info;
  int laggard;
  volatile int pids[NRANKS];
  volatile int stopReady, resumed;
} shared_t;

/* mkccl-info's output, all of it. */
static char* run_info(const char* info, const char* arg) {
  char cmd[1024];
  snprintf(cmd, sizeof(cmd), "%s %s 2>&1", info, arg);
  FILE* p = popen(cmd, "r");
  CHECK(p != NULL);
  size_t cap = 1 << 16, n = 0;
  char* out = malloc(cap);
  CHECK(out);
  size_t got;
  while ((got = fread(out + n, 1, cap - 1 - n, p)) > 0) n += got;
  out[n] = '\0';
  CHECK_MSG(pclose(p) == 0, "'%s' failed:\n%s", cmd, out);
  return out;
}

/* The lines of out that mention `needle`, printed when a check fails. */
static int expect(const char* out, const char* needle, const char* what) {
  CHECK_MSG(strstr(out, needle), "mkccl-info --status does not say %s ('%s'):\n%s", what, needle, out);
  return 0;
}

static int check_status(shared_t* s, int rank, int laps) {
  char host[64] = "", want[256];
  gethostname(host, sizeof(host) - 1);
  usleep(300 * 1000); /* the others are in their AllReduce by now */
  char* out = run_info(s->info, "--status");
  printf("rank %d asked:\n%s", rank, out);
  snprintf(want, sizeof(want), "waiting for: rank %d (host %s, pid %d: %d of %d collectives called)", rank, host,
           (int)getpid(), laps, laps + 1);
  CHECK(expect(out, want, "which rank the others wait for") == 0);
  for (int r = 0; r < NRANKS; r++) {
    if (r == rank) continue;
    snprintf(want, sizeof(want), "%d*", laps + 1);
    CHECK(expect(out, want, "that the others are in a collective") == 0);
    snprintf(want, sizeof(want), "%d", s->pids[r]);
    CHECK(expect(out, want, "the other ranks' pids") == 0);
  }
  CHECK(expect(out, "AllReduce 4096 x int32", "the collective they are in") == 0);
  free(out);
  /* One process, by pid: it gathers every rank's record too. */
  char arg[64];
  snprintf(arg, sizeof(arg), "--status=%d", s->pids[(rank + 1) % NRANKS]);
  out = run_info(s->info, arg);
  snprintf(want, sizeof(want), "waiting for: rank %d (host %s, pid %d", rank, host, (int)getpid());
  CHECK(expect(out, want, "the laggard when asked by pid") == 0);
  free(out);
  return 0;
}

/* Rank 0's second thread while its first waits in the AllReduce: rank 1 is
 * stopped; the status must name it as not answering; then it goes on. */
static void* stopped_check(void* arg) {
  shared_t* s = arg;
  usleep(300 * 1000);
  char* out = run_info(s->info, "--status");
  printf("rank 0 asked, rank 1 stopped:\n%s", out);
  char host[64] = "", want[256];
  gethostname(host, sizeof(host) - 1);
  snprintf(want, sizeof(want), "no answer from: rank 1 (host %s, pid %d)", host, s->pids[1]);
  int bad = strstr(out, want) == NULL;
  if (bad) fprintf(stderr, "mkccl-info --status does not say '%s':\n%s", want, out);
  free(out);
  kill(s->pids[1], SIGCONT);
  __atomic_store_n(&s->resumed, 1, __ATOMIC_RELEASE);
  return (void*)(intptr_t)bad;
}

static int stopped_pass(shared_t* s, int rank, int n, ncclComm_t comm) {
  int32_t in[COUNT], out[COUNT];
  pthread_t t;
  if (rank == 1) {
    __atomic_store_n(&s->stopReady, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&s->resumed, __ATOMIC_ACQUIRE)) usleep(1000); /* stopped here */
  }
  if (rank == 0) {
    while (!__atomic_load_n(&s->stopReady, __ATOMIC_ACQUIRE)) usleep(1000);
    CHECK(kill(s->pids[1], SIGSTOP) == 0);
    CHECK(pthread_create(&t, NULL, stopped_check, s) == 0);
  }
  for (int i = 0; i < COUNT; i++) in[i] = (rank + 1) * 7 + i;
  CHECK_NCCL(ncclAllReduce(in, out, COUNT, ncclInt32, ncclSum, comm, NULL));
  for (int i = 0; i < COUNT; i++)
    CHECK_MSG(out[i] == n * (n + 1) / 2 * 7 + n * i, "rank %d after the stop: element %d is %d", rank, i, out[i]);
  if (rank == 0) {
    void* bad = NULL;
    pthread_join(t, &bad);
    CHECK_MSG(bad == NULL, "the status did not name the stopped rank");
  }
  return 0;
}

static int rank_main(int rank, int n, void* arg) {
  shared_t* s = arg;
  s->pids[rank] = (int)getpid();
  ncclComm_t comm = ranks_comm_init(rank, n);
  int32_t in[COUNT], out[COUNT];
  for (int pass = 0; pass < 2; pass++) {
    int laggard = (s->laggard + pass) % NRANKS;
    for (int lap = 0; lap <= LAPS; lap++) {
      int done = pass * (LAPS + 1) + lap; /* collectives every rank completed */
      if (rank == laggard && lap == LAPS) CHECK(check_status(s, rank, done) == 0);
      for (int i = 0; i < COUNT; i++) in[i] = (rank + 1) * 100000 + i * 3 + lap;
      CHECK_NCCL(ncclAllReduce(in, out, COUNT, ncclInt32, ncclSum, comm, NULL));
      for (int i = 0; i < COUNT; i++) {
        int32_t want = 0;
        for (int q = 0; q < n; q++) want += (q + 1) * 100000 + i * 3 + lap;
        CHECK_MSG(out[i] == want, "rank %d lap %d: element %d is %d, not %d", rank, lap, i, out[i], want);
      }
    }
  }
  CHECK(stopped_pass(s, rank, n, comm) == 0);
  CHECK_NCCL(ncclCommDestroy(comm));
  return 0;
}

int main(int argc, char** argv) {
  CHECK_MSG(argc == 2, "usage: test_peer_status MKCCL_INFO_BINARY");
  shared_t* s = ranks_shared_alloc(sizeof(shared_t));
  CHECK(s);
  s->info = argv[1];
  s->laggard = 2;
  CHECK_EQ_INT(ranks_run(NRANKS, rank_main, s, 120), 0);
  printf("the status named the lagging rank twice, asked for all and by pid, and the stopped one\n");
  return 0;
}
