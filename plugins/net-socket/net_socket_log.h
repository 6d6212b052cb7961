/* Logging through the logger the host (NCCL or mkccl) hands to init/bind.
 * Before either, messages are dropped: a plugin never prints on its own.
 * NS_FAIL(res, fmt, ...) logs a WARN where an error is decided and yields res. */
#ifndef NET_SOCKET_LOG_H
#define NET_SOCKET_LOG_H

#include "nccl.h"
#include "nccl_common.h"

extern ncclDebugLogger_t net_socket_logger;

/* Set by every init (communicators may init concurrently): atomic. */
void net_socket_log_set(ncclDebugLogger_t logger);
static inline ncclDebugLogger_t net_socket_log_get(void) { return __atomic_load_n(&net_socket_logger, __ATOMIC_ACQUIRE); }

#define NS_LOG(level, flags, ...)                                                                         \
  (net_socket_log_get() ? net_socket_log_get()(level, flags, __FILE__, __LINE__, "NET/Socket : " __VA_ARGS__) \
                        : (void)0)

#define NS_WARN(...) NS_LOG(NCCL_LOG_WARN, NCCL_NET, __VA_ARGS__)
#define NS_INFO(flags, ...) NS_LOG(NCCL_LOG_INFO, flags, __VA_ARGS__)
#define NS_TRACE(...) NS_LOG(NCCL_LOG_TRACE, NCCL_NET, __VA_ARGS__)
#define NS_FAIL(res, ...) (NS_WARN(__VA_ARGS__), (res))

/* Pass an error up without logging again. */
#define NS_CHECK(call)                   \
  do {                                   \
    ncclResult_t r_ = (call);            \
    if (r_ != ncclSuccess) return r_;    \
  } while (0)
#define NS_CHECK_GOTO(call, res, label)  \
  do {                                   \
    (res) = (call);                      \
    if ((res) != ncclSuccess) goto label; \
  } while (0)

#endif
