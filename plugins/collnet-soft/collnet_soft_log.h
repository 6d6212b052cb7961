/* Logging and parameters of collnet-soft, through what the host (mkccl or
 * NCCL) hands to bind/init. Before either, messages are dropped.
 * CS_FAIL(res, fmt, ...) logs a WARN where an error is decided, yields res. */
#ifndef COLLNET_SOFT_LOG_H
#define COLLNET_SOFT_LOG_H

#include <stdint.h>

#include "mkccl_plugin_params.h"
#include "nccl.h"
#include "nccl_common.h"

void collnet_soft_log_set(ncclDebugLogger_t logger);
ncclDebugLogger_t collnet_soft_log_get(void);

#define CS_LOG(level, flags, ...)                                                                      \
  (collnet_soft_log_get() ? collnet_soft_log_get()(level, flags, __FILE__, __LINE__, "COLLNET/Soft : " \
                                                   __VA_ARGS__)                                       \
                          : (void)0)
#define CS_WARN(...) CS_LOG(NCCL_LOG_WARN, NCCL_NET, __VA_ARGS__)
#define CS_INFO(...) CS_LOG(NCCL_LOG_INFO, NCCL_INIT | NCCL_NET, __VA_ARGS__)
#define CS_FAIL(res, ...) (CS_WARN(__VA_ARGS__), (res))
#define CS_CHECK(call)                \
  do {                                \
    ncclResult_t r_ = (call);         \
    if (r_ != ncclSuccess) return r_; \
  } while (0)

/* collnet_soft_param_<NAME>(): typed accessors over collnet_soft_params.def. */
#define PLUGIN_PARAM(name, type, def, help) PLUGIN_PARAM_PROTO(collnet_soft_param_, name, type)
#include "collnet_soft_params.def"
#undef PLUGIN_PARAM

#endif
