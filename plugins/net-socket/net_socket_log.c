#include "net_socket_log.h"

ncclDebugLogger_t net_socket_logger = NULL;

void net_socket_log_set(ncclDebugLogger_t logger) {
  if (logger) __atomic_store_n(&net_socket_logger, logger, __ATOMIC_RELEASE);
}
