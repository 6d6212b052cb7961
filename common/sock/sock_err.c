/* Per-thread failure text and the wait checks every blocking call shares. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "sock/sock_internal.h"

static __thread char sock_err_text[512];

const char* sock_error(void) { return sock_err_text; }

int sock_fail(int status, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(sock_err_text, sizeof(sock_err_text), fmt, ap);
  va_end(ap);
  return status;
}

const char* sock_status_name(int status) {
  switch (status) {
    case SOCK_OK: return "SOCK_OK";
    case SOCK_ESYS: return "SOCK_ESYS";
    case SOCK_ETIMEOUT: return "SOCK_ETIMEOUT";
    case SOCK_EABORT: return "SOCK_EABORT";
    case SOCK_ECLOSED: return "SOCK_ECLOSED";
    case SOCK_EINVAL: return "SOCK_EINVAL";
    case SOCK_ENOTFOUND: return "SOCK_ENOTFOUND";
    case SOCK_EPROTO: return "SOCK_EPROTO";
    default: return "SOCK_E?";
  }
}

int64_t sock_time_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t sock_deadline_ms(int64_t ms) {
  if (ms < 0) return SOCK_NO_DEADLINE;
  int64_t now = sock_time_ns();
  if (ms > (SOCK_NO_DEADLINE - now) / 1000000) return SOCK_NO_DEADLINE;
  return now + ms * 1000000;
}

int sock_check_wait(int64_t deadline, volatile uint32_t* abortFlag, const char* what) {
  if (abortFlag && __atomic_load_n(abortFlag, __ATOMIC_ACQUIRE))
    return sock_fail(SOCK_EABORT, "%s: aborted", what);
  if (deadline != SOCK_NO_DEADLINE && sock_time_ns() >= deadline)
    return sock_fail(SOCK_ETIMEOUT, "%s: timed out", what);
  return SOCK_OK;
}

int sock_poll_slice_ms(int64_t deadline) {
  if (deadline == SOCK_NO_DEADLINE) return 10;
  int64_t left = (deadline - sock_time_ns() + 999999) / 1000000;
  if (left < 0) return 0;
  return left < 10 ? (int)left : 10;
}
