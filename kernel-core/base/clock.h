/* The monotonic clock: nanoseconds now (deadlines, polling bounds,
 * profiler timestamps), and milliseconds since a reading (logs). */
#ifndef MKCCL_BASE_CLOCK_H
#define MKCCL_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t mk_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline double mk_ms_since(const struct timespec* t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) * 1e-6;
}

#endif
