#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ranks.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void* ranks_shared_alloc(unsigned long bytes) {
  void* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

#define RANKS_GRACE_SEC 15

#if defined(__SANITIZE_THREAD__)
#include <pthread.h>
static void* ranks_noop(void* arg) { return arg; }
#endif

/* ThreadSanitizer (gcc 12) starts a background thread in a forked child and
 * a second one at the child's first pthread_create; both live until exit.
 * Create that first thread before the rank runs, so tests that compare the
 * process's threads before and after a communicator count only their own. */
static void ranks_settle_runtime_threads(void) {
#if defined(__SANITIZE_THREAD__)
  pthread_t t;
  if (pthread_create(&t, NULL, ranks_noop, NULL) == 0) pthread_join(t, NULL);
#endif
}

#define RANKS_SHARE_SLOTS 16
#define RANKS_SHARE_BYTES 1024
#define RANKS_SHARE_WAIT_SEC 120
typedef struct {
  int ready;
  char data[RANKS_SHARE_BYTES];
} share_slot_t;
static share_slot_t* shareSlots; /* mapped once, emptied before each run's forks */
static int shareNext;            /* this process's next slot */

int ranks_share(int rank, void* data, unsigned long bytes, ranks_make_fn make) {
  if (!shareSlots || bytes > RANKS_SHARE_BYTES || shareNext >= RANKS_SHARE_SLOTS) {
    fprintf(stderr, "ranks_share: outside ranks_run, more than %d bytes or %d calls\n", RANKS_SHARE_BYTES,
            RANKS_SHARE_SLOTS);
    return -1;
  }
  share_slot_t* s = &shareSlots[shareNext++];
  if (rank == 0) {
    if (make(data) != 0) return -1;
    memcpy(s->data, data, bytes);
    __atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
    return 0;
  }
  /* Bounded: if rank 0 failed first, ranks_run ends this rank anyway. */
  for (int ms = 0; !__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE); ms++) {
    if (ms >= RANKS_SHARE_WAIT_SEC * 1000) {
      fprintf(stderr, "ranks_share: rank %d: rank 0 shared nothing in %d s\n", rank, RANKS_SHARE_WAIT_SEC);
      return -1;
    }
    usleep(1000);
  }
  memcpy(data, s->data, bytes);
  return 0;
}

int ranks_run(int nranks, rank_fn fn, void* arg, int timeoutSec) {
  int status[256];
  if (ranks_run_status(nranks, fn, arg, timeoutSec, status) != 0) return -1;
  int failed = 0;
  for (int r = 0; r < nranks; r++)
    if (status[r] != 0) {
      fprintf(stderr, "rank %d failed (%s %d)\n", r, status[r] > 0 ? "exit" : "signal",
              status[r] > 0 ? status[r] : -status[r]);
      failed = 1;
    }
  return failed ? -1 : 0;
}

int ranks_run_status(int nranks, rank_fn fn, void* arg, int timeoutSec, int* status) {
  pid_t pids[256];
  if (nranks < 1 || nranks > 256) return -1;
  if (!shareSlots && !(shareSlots = ranks_shared_alloc(sizeof(share_slot_t) * RANKS_SHARE_SLOTS))) return -1;
  memset(shareSlots, 0, sizeof(share_slot_t) * RANKS_SHARE_SLOTS);
  shareNext = 0;
  fflush(stdout);
  fflush(stderr);
  pid_t parent = getpid();
  for (int r = 0; r < nranks; r++) {
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
      /* A rank dies with the process that runs the ranks (killed by a
       * timeout or its own alarm): an orphaned GPU rank would keep spinning
       * kernels on the GPUs and hang or slow every later test there. */
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(1);
      ranks_settle_runtime_threads();
      int rc = fn(r, nranks, arg);
      fflush(stdout);
      fflush(stderr);
      _exit(rc == 0 ? 0 : 1);
    }
    pids[r] = pid;
  }
  int left = nranks, failed = 0;
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  while (left > 0) {
    int ws;
    pid_t pid = waitpid(-1, &ws, WNOHANG);
    if (pid > 0) {
      for (int r = 0; r < nranks; r++)
        if (pids[r] == pid) {
          pids[r] = 0;
          left--;
          status[r] = WIFEXITED(ws) ? WEXITSTATUS(ws) : -WTERMSIG(ws);
          /* The others may wait on a failed rank forever: give them a few seconds. */
          if (status[r] != 0 && !failed && timeoutSec > RANKS_GRACE_SEC) {
            clock_gettime(CLOCK_MONOTONIC, &start);
            timeoutSec = RANKS_GRACE_SEC;
          }
          if (status[r] != 0) failed = 1;
        }
      continue;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec > timeoutSec) {
      fprintf(stderr, "ranks_run: timeout after %d s, killing %d rank(s)\n", timeoutSec, left);
      for (int r = 0; r < nranks; r++)
        if (pids[r]) kill(pids[r], SIGKILL);
      while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) {
      }
      return -1;
    }
    usleep(2000);
  }
  return 0;
}
