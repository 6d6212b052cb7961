/* Waiting on the host executor: spin briefly, yield a little, then sleep on
 * the word's futex (its producer wakes us, see mkccl_conn_fifo_v1.h), so
 * many ranks can share few cores without stealing time from the threads
 * doing the work. Every wait ends early when the abort flag is raised (a
 * dead peer, a proxy error, ncclCommAbort); sleeps are bounded so the flag
 * is seen within a millisecond. */
#ifndef MKCCL_HOST_WAIT_H
#define MKCCL_HOST_WAIT_H

#include <sched.h>
#include <time.h>
#include <stdint.h>

#include "base/clock.h"
#include "transport/mkccl_conn_fifo_v1.h"

static inline void host_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

/* Fetch a line for writing (PREFETCHW; x86 CPUs older than it run it as a no-op). */
static inline void host_prefetchw(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  __asm__ volatile("prefetchw %0" : : "m"(*(const char*)p));
#elif defined(__aarch64__)
  __asm__ volatile("prfm pstl1keep, %0" : : "Q"(*(const char*)p));
#else
  (void)p;
#endif
}

typedef struct {
  uint32_t spins;
} host_waiter_t;

/* Few spins, many yields: with more ranks than cores (4 ranks on 2 cores)
 * the peer a rank waits for needs this core, and a yield hands it over at
 * once where spinning or a futex sleep and wake-up cost several times a
 * small AllReduce; with a core each, the data
 * arrives within the spins. */
#define HOST_WAIT_SPINS 16
#define HOST_WAIT_YIELDS 4096
#define HOST_WAIT_SLEEP_NS 1000000L

/* One round of waiting with no word to sleep on (yields); non-zero when
 * the caller must stop (abort). */
static inline int host_wait_round(host_waiter_t* w, volatile uint32_t* abortFlag) {
  if (__atomic_load_n(abortFlag, __ATOMIC_RELAXED)) return 1;
  if (++w->spins < HOST_WAIT_SPINS) host_cpu_relax();
  else sched_yield();
  return 0;
}

int proxy_progress_help(int lane); /* kernel-core/proxy */

/* MKCCL_TIMEOUT in nanoseconds (0: none): one process-wide copy, set by
 * host_exec_create (of any comm, any thread: atomic), because the waits
 * below are the hot path. */
extern int64_t host_wait_timeout_ns;
extern uint32_t host_ll_polls; /* MKCCL_HOST_LL_POLLS, set by host_exec_create */

/* A wait saw no progress for MKCCL_TIMEOUT: logs what it waited for and
 * raises the abort flag, so every other wait of the communicator ends too
 * (the peer is dead or stuck; the communicator cannot recover). */
void host_wait_timed_out(volatile uint32_t* abortFlag, const char* what);

enum { HOST_WAIT_OK = 0, HOST_WAIT_ABORTED = 1, HOST_WAIT_TIMEOUT = 2 };

/* The deadline is armed once the fast spins are over (a wait that ends
 * quickly never reads the clock) and checked every few rounds. */
static inline int host_wait_expired(int64_t* deadline) {
  int64_t timeout = __atomic_load_n(&host_wait_timeout_ns, __ATOMIC_RELAXED);
  if (timeout <= 0) return 0;
  int64_t now = mk_now_ns();
  if (*deadline == 0) *deadline = now + timeout;
  return now > *deadline;
}

/* One round of waiting after `spins` rounds without progress: a pause,
 * then yields, then sleeps on `word` while it is below `target` (its writer
 * wakes sleepers); HOST_WAIT_TIMEOUT once MKCCL_TIMEOUT has passed. */
static inline int host_wait_backoff(uint32_t spins, int64_t* deadline, volatile uint64_t* word, uint64_t target) {
  if (spins < HOST_WAIT_SPINS) {
    host_cpu_relax();
    return HOST_WAIT_OK;
  }
  if (spins < HOST_WAIT_SPINS + HOST_WAIT_YIELDS) {
    /* From the first yield: on a busy machine a yield can take a whole
     * time slice, and 4096 of them took seconds before the deadline was
     * even armed (a peer's death seen 6-8 s late with MKCCL_TIMEOUT=2). */
    if ((spins - HOST_WAIT_SPINS) % 64 == 0 && host_wait_expired(deadline)) return HOST_WAIT_TIMEOUT;
    sched_yield();
    return HOST_WAIT_OK;
  }
  uint64_t v = conn_fifo_load(word);
  if (v < target) conn_fifo_sleep(word, v, HOST_WAIT_SLEEP_NS);
  return host_wait_expired(deadline) ? HOST_WAIT_TIMEOUT : HOST_WAIT_OK;
}

/* Wait until *word >= target: HOST_WAIT_OK, HOST_WAIT_ABORTED, or
 * HOST_WAIT_TIMEOUT after MKCCL_TIMEOUT without the word reaching it. On a
 * connection the proxy drives (its proxy lane >= 0), the waiter runs that
 * lane's proxy rounds itself rather than sleep: the word moves when the
 * network does. */
static inline int host_wait_ge(volatile uint64_t* word, uint64_t target, volatile uint32_t* abortFlag, int lane) {
  uint32_t spins = 0;
  int64_t deadline = 0;
  for (;;) {
    if (conn_fifo_load(word) >= target) return HOST_WAIT_OK;
    if (__atomic_load_n(abortFlag, __ATOMIC_RELAXED)) return HOST_WAIT_ABORTED;
    if (lane >= 0) {
      if (!proxy_progress_help(lane) && ++spins % 16 == 0) sched_yield();
      if (spins % 1024 == 1023 && host_wait_expired(&deadline)) return HOST_WAIT_TIMEOUT;
      continue;
    }
    if (host_wait_backoff(spins++, &deadline, word, target) != HOST_WAIT_OK) return HOST_WAIT_TIMEOUT;
  }
}

/* One round of waiting for whichever of several words moves first (no one
 * word to sleep on): rounds of proxy lane `lane` where the proxy moves them
 * (lane >= 0), else spins, yields, then short sleeps; HOST_WAIT_ABORTED or
 * HOST_WAIT_TIMEOUT as host_wait_ge. The caller counts rounds without
 * progress in *spins. */
static inline int host_wait_any_round(uint32_t* spins, int64_t* deadline, volatile uint32_t* abortFlag, int lane) {
  if (__atomic_load_n(abortFlag, __ATOMIC_RELAXED)) return HOST_WAIT_ABORTED;
  uint32_t n = ++*spins;
  if (lane >= 0) {
    if (!proxy_progress_help(lane) && n % 16 == 0) sched_yield();
  } else if (n < HOST_WAIT_SPINS) {
    host_cpu_relax();
  } else if (n < HOST_WAIT_SPINS + HOST_WAIT_YIELDS) {
    sched_yield();
  } else {
    struct timespec ts = {0, 50000};
    nanosleep(&ts, NULL);
  }
  if (n % 64 == 63 && n > HOST_WAIT_SPINS && host_wait_expired(deadline)) return HOST_WAIT_TIMEOUT;
  return HOST_WAIT_OK;
}

/* Wait until the 8-byte word's upper half is `flag` (an LL line's word,
 * device/host/host_prims.c); *value: the word then. First reads it
 * MKCCL_HOST_LL_POLLS times back to back (a pause is tens of nanoseconds on
 * a server core, about what the line takes to arrive; only LL waits do
 * this: a Simple wait that hammers the tail slows the writer of large
 * slices), then backs off as host_wait_ge does, sleeping on `tail` until it
 * reaches `target` (the writer moves the tail after the line). */
static inline int host_wait_flag(const uint64_t* word, uint32_t flag, volatile uint64_t* tail, uint64_t target,
                                 volatile uint32_t* abortFlag, uint64_t* value) {
  uint32_t spins = 0, polls = __atomic_load_n(&host_ll_polls, __ATOMIC_RELAXED);
  int64_t deadline = 0;
  for (;;) {
    uint64_t v = __atomic_load_n(word, __ATOMIC_RELAXED);
    if ((uint32_t)(v >> 32) == flag) {
      *value = v;
      return HOST_WAIT_OK;
    }
    if (polls) {
      polls--;
      continue;
    }
    if (__atomic_load_n(abortFlag, __ATOMIC_RELAXED)) return HOST_WAIT_ABORTED;
    if (host_wait_backoff(spins++, &deadline, tail, target) != HOST_WAIT_OK) return HOST_WAIT_TIMEOUT;
  }
}

#endif
