/* Where two CPUs sit relative to each other, as the host executor's send
 * slots see it: two processes, a writer filling 8 slots of 512 KB in turn
 * and a reader copying each out once the writer publishes it (the way a
 * 2-rank SHM ring moves a large message), first with cached stores, then
 * with streaming stores (device/host/host_store.h); before that the one-way
 * latency of a cache line between them. On the 2-core VM the host puts the
 * two vCPUs near (one cache: ~60-100 ns, cached stores fastest) or apart
 * (~180-250 ns, streaming stores 2x to 3x faster) and moves them while a
 * program runs; docs/perf/host-shm.md tags runs with this.
 *   mkccl-slot-stream [MB per mode, default 256] */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "device/host/host_store.h"

#define SLOT (512 * 1024)
#define NSLOTS 8
#define PINGS 100000

typedef struct {
  _Alignas(64) _Atomic uint64_t ping;
  _Alignas(64) _Atomic uint64_t pong;
  _Alignas(64) _Atomic uint64_t tail; /* slots published by the writer */
  _Alignas(64) _Atomic uint64_t head; /* slots the reader is done with */
  _Alignas(64) double readerSec;
} shared_t;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static void wait_ge(_Atomic uint64_t* w, uint64_t v) {
  while (atomic_load_explicit(w, memory_order_acquire) < v) relax();
}

/* One mode's stream: the writer's copy rate and the whole stream's (GB/s). */
static void stream(shared_t* sh, char* slots, char* priv, long steps, int streaming, int writer, double* copyRate,
                   double* rate) {
  double copySec = 0, t0 = now_s();
  for (long st = 0; st < steps; st++) {
    char* slot = slots + (size_t)(st % NSLOTS) * SLOT;
    if (writer) {
      if (st >= NSLOTS) wait_ge(&sh->head, (uint64_t)(st - NSLOTS + 1));
      double c0 = now_s();
      if (streaming) {
        host_copy_stream(slot, priv, SLOT);
        host_store_fence();
      } else {
        memcpy(slot, priv, SLOT);
      }
      copySec += now_s() - c0;
      atomic_store_explicit(&sh->tail, (uint64_t)st + 1, memory_order_release);
    } else {
      wait_ge(&sh->tail, (uint64_t)st + 1);
      memcpy(priv, slot, SLOT);
      atomic_store_explicit(&sh->head, (uint64_t)st + 1, memory_order_release);
    }
  }
  double bytes = (double)steps * SLOT;
  *copyRate = bytes / copySec / 1e9;
  *rate = bytes / (now_s() - t0) / 1e9;
}

int main(int argc, char** argv) {
  long mb = argc > 1 ? atol(argv[1]) : 256;
  if (mb < 8) {
    fprintf(stderr, "usage: mkccl-slot-stream [MB per mode, at least 8]\n");
    return 2;
  }
  long steps = mb * 1024 * 1024 / SLOT;
  shared_t* sh = mmap(NULL, sizeof(shared_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  char* slots = mmap(NULL, (size_t)SLOT * NSLOTS, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  char* priv = aligned_alloc(64, SLOT);
  if (sh == MAP_FAILED || slots == MAP_FAILED || !priv) {
    perror("mkccl-slot-stream: memory");
    return 1;
  }
  memset(slots, 1, (size_t)SLOT * NSLOTS);
  memset(priv, 2, SLOT);
  pid_t child = fork();
  if (child < 0) {
    perror("fork");
    return 1;
  }
  int writer = child != 0;
  /* One-way latency: the parent pings, the child answers. */
  double t0 = now_s();
  for (uint64_t i = 1; i <= PINGS; i++) {
    if (writer) {
      atomic_store_explicit(&sh->ping, i, memory_order_release);
      wait_ge(&sh->pong, i);
    } else {
      wait_ge(&sh->ping, i);
      atomic_store_explicit(&sh->pong, i, memory_order_release);
    }
  }
  double oneWayNs = (now_s() - t0) / PINGS / 2 * 1e9;
  double copyRate[2], rate[2];
  for (int mode = 0; mode < 2; mode++) {
    /* The writer clears the counters (the reader is done with the last
     * stream), then both meet at the start line. */
    uint64_t line = PINGS + 1 + (uint64_t)mode;
    if (writer) {
      atomic_store(&sh->tail, 0);
      atomic_store(&sh->head, 0);
      atomic_store_explicit(&sh->ping, line, memory_order_release);
      wait_ge(&sh->pong, line);
    } else {
      wait_ge(&sh->ping, line);
      atomic_store_explicit(&sh->pong, line, memory_order_release);
    }
    stream(sh, slots, priv, steps, mode, writer, &copyRate[mode], &rate[mode]);
    if (writer) wait_ge(&sh->head, (uint64_t)steps);
  }
  if (!writer) return 0;
  int status = 0;
  waitpid(child, &status, 0);
  printf("one-way %.0f ns | cached: writer %.2f, stream %.2f GB/s | streaming: writer %.2f, stream %.2f GB/s\n",
         oneWayNs, copyRate[0], rate[0], copyRate[1], rate[1]);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
