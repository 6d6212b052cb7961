/* The floor under any 2-rank small-message exchange on one host: two
 * processes each store a counter in a cache line of their own and spin
 * until the other's line carries the same count (one line each way per
 * round, as a 2-rank FLAT AllReduce over SHM moves). Prints the time per
 * round; docs/PERFORMANCE.md compares 8 B AllReduce times against it.
 *   mkccl-line-exchange [rounds] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WARMUP 1000

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

int main(int argc, char** argv) {
  long rounds = argc > 1 ? atol(argv[1]) : 200000;
  if (rounds <= WARMUP) {
    fprintf(stderr, "usage: mkccl-line-exchange [rounds > %d]\n", WARMUP);
    return 2;
  }
  /* Two 64-byte lines, one per process, in memory both map. */
  uint64_t* lines = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (lines == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  pid_t child = fork();
  if (child < 0) {
    perror("fork");
    return 1;
  }
  int me = child == 0;
  uint64_t* mine = lines + 8 * me;
  uint64_t* peer = lines + 8 * (1 - me);
  double t0 = 0;
  for (long i = 1; i <= rounds; i++) {
    if (i == WARMUP) t0 = now_us();
    __atomic_store_n(mine, (uint64_t)i, __ATOMIC_RELEASE);
    while (__atomic_load_n(peer, __ATOMIC_ACQUIRE) < (uint64_t)i) relax();
  }
  double us = (now_us() - t0) / (double)(rounds - WARMUP + 1);
  if (me) return 0;
  int status = 0;
  waitpid(child, &status, 0);
  printf("# mkccl-line-exchange: %ld rounds, one cache line each way per round\n%.3f us per round\n", rounds, us);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
