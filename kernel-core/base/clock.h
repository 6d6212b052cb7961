/* Elapsed time for logs: milliseconds since a CLOCK_MONOTONIC reading. */
#ifndef MKCCL_BASE_CLOCK_H
#define MKCCL_BASE_CLOCK_H

#include <time.h>

static inline double mk_ms_since(const struct timespec* t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) * 1e-6;
}

#endif
