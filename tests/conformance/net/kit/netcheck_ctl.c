/* Control frames on the socket between the referee and a role:
 * {type, len} then len bytes. Every receive is bounded by a deadline. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "netcheck.h"

int64_t netcheck_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int netcheck_write_all(int fd, const void* data, size_t len) {
  const char* p = data;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

static int netcheck_read_all(int fd, void* data, size_t len, int64_t deadlineMs) {
  char* p = data;
  while (len > 0) {
    int64_t left = deadlineMs - netcheck_now_ms();
    if (left <= 0) return -2;
    struct pollfd pfd = {fd, POLLIN, 0};
    int rc = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return -1;
    if (rc == 0) continue;
    ssize_t n = read(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

int netcheck_ctl_send(int fd, uint32_t type, const void* data, uint32_t len) {
  uint32_t hdr[2] = {type, len};
  if (len > NC_FRAME_MAX) return -1;
  if (netcheck_write_all(fd, hdr, sizeof(hdr)) != 0) return -1;
  return len ? netcheck_write_all(fd, data, len) : 0;
}

int netcheck_ctl_recv(int fd, uint32_t* type, void* data, uint32_t cap, int64_t deadlineMs) {
  uint32_t hdr[2];
  int rc = netcheck_read_all(fd, hdr, sizeof(hdr), deadlineMs);
  if (rc != 0) return rc;
  if (hdr[1] > cap || hdr[1] > NC_FRAME_MAX) return -1;
  /* the body follows the header at once: a short grace beyond the deadline */
  if (hdr[1] && netcheck_read_all(fd, data, hdr[1], (deadlineMs > netcheck_now_ms() ? deadlineMs : netcheck_now_ms()) + 1000) != 0)
    return -1;
  *type = hdr[0];
  return (int)hdr[1];
}

static netcheck_counts_t netcheck_count;

void netcheck_line(const char* verdict, const char* check, const char* detail) {
  if (strcmp(verdict, "PASS") == 0) netcheck_count.pass++;
  else if (strcmp(verdict, "WARN") == 0) netcheck_count.warn++;
  else if (strcmp(verdict, "SKIP") == 0) netcheck_count.skip++;
  else netcheck_count.fail++;
  printf("%-4s %-28s %s\n", verdict, check, detail ? detail : "");
  fflush(stdout);
}

int netcheck_failures(void) { return netcheck_count.fail; }

netcheck_counts_t netcheck_counts(void) { return netcheck_count; }
