/* Shared by the net-socket tests: load the plugin (any ABI version) through
 * net_any, connect two comms, wait for requests, fill and check buffers,
 * count fds and threads. Failures exit through CHECK (tests/common). */
#ifndef NS_HARNESS_H
#define NS_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "net_any.h"

/* Loads the plugin under test, version v, and calls init. */
void ns_load(net_any_t* n, int version);
/* A logger printing WARN (and INFO with NS_TEST_VERBOSE set) to stderr. */
void ns_logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...);

/* Polls accept until it returns a comm. */
void* ns_accept(net_any_t* n, void* listenComm);
/* Polls connect until it returns a comm. */
void* ns_connect(net_any_t* n, int dev, void* handle);
/* Listens and connects in this process: both ends of one connection. */
void ns_pair(net_any_t* n, int dev, void** sendComm, void** recvComm);

/* Tests req until done; returns the final result (ncclSuccess with sizes set,
 * or the error test returned). */
ncclResult_t ns_wait(net_any_t* n, void* req, int* sizes);

/* Deterministic content per (seed, offset). */
void ns_fill(void* buf, size_t size, uint32_t seed);
/* Index of the first wrong byte, or -1. */
long ns_verify(const void* buf, size_t size, uint32_t seed);


/* Kills the process if the test runs past sec: a hang fails, never blocks CI. */
void ns_watchdog(unsigned sec);

#endif
