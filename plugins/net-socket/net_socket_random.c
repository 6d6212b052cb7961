/* Random values for the handshake (net_socket_handle.h). */
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "net_socket_handle.h"

uint64_t net_socket_random64(void) {
  uint64_t v = 0;
  if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v) && v != 0) return v;
  struct timespec ts; /* no entropy yet: mix what differs between processes and calls */
  clock_gettime(CLOCK_MONOTONIC, &ts);
  static uint64_t counter;
  v = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 16) ^ ++counter;
  v ^= v >> 33;
  v *= 0xff51afd7ed558ccdull;
  v ^= v >> 33;
  return v ? v : 1;
}
