#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ns_harness.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

void ns_logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)flags;
  if (level > NCCL_LOG_WARN && !getenv("NS_TEST_VERBOSE")) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  fprintf(stderr, "[%d] %s %s:%d %s\n", (int)getpid(), level == NCCL_LOG_WARN ? "WARN" : "INFO", file, line, msg);
}

void ns_load(net_any_t* n, int version) {
  char err[512];
  CHECK_MSG(net_any_open(n, NS_PLUGIN_PATH, version, err, sizeof(err)) == 0, "%s", err);
  CHECK_EQ_INT(net_any_init(n, ns_logger), ncclSuccess);
}

void* ns_accept(net_any_t* n, void* listenComm) {
  void* comm = NULL;
  while (!comm) {
    CHECK_EQ_INT(net_any_accept(n, listenComm, &comm), ncclSuccess);
    if (!comm) sched_yield();
  }
  return comm;
}

void* ns_connect(net_any_t* n, int dev, void* handle) {
  void* comm = NULL;
  while (!comm) {
    CHECK_EQ_INT(net_any_connect(n, dev, handle, &comm), ncclSuccess);
    if (!comm) sched_yield();
  }
  return comm;
}

void ns_pair(net_any_t* n, int dev, void** sendComm, void** recvComm) {
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* lc = NULL;
  CHECK_EQ_INT(net_any_listen(n, dev, handle, &lc), ncclSuccess);
  void *sc = NULL, *rc = NULL;
  while (!sc || !rc) { /* one process: alternate, as a host's proxy would */
    if (!sc) CHECK_EQ_INT(net_any_connect(n, dev, handle, &sc), ncclSuccess);
    if (!rc) CHECK_EQ_INT(net_any_accept(n, lc, &rc), ncclSuccess);
  }
  CHECK_EQ_INT(net_any_close_listen(n, lc), ncclSuccess);
  *sendComm = sc;
  *recvComm = rc;
}

ncclResult_t ns_wait(net_any_t* n, void* req, int* sizes) {
  for (;;) {
    int done = 0;
    ncclResult_t res = net_any_test(n, req, &done, sizes);
    if (res != ncclSuccess || done) return res;
    sched_yield();
  }
}

static inline uint8_t ns_byte(uint32_t seed, size_t i) {
  return (uint8_t)(seed * 131u + (uint32_t)i * 7u + (uint32_t)(i >> 9) + (uint32_t)(i >> 17));
}

void ns_fill(void* buf, size_t size, uint32_t seed) {
  uint8_t* p = buf;
  for (size_t i = 0; i < size; i++) p[i] = ns_byte(seed, i);
}

long ns_verify(const void* buf, size_t size, uint32_t seed) {
  const uint8_t* p = buf;
  for (size_t i = 0; i < size; i++)
    if (p[i] != ns_byte(seed, i)) return (long)i;
  return -1;
}


void ns_watchdog(unsigned sec) { alarm(sec); }
