/* For net plugins that wrap another net plugin (test and shim plugins):
 * opening the wrapped one. libc and the ABI headers only. */
#ifndef MKCCL_COMMON_PLUGWRAP_H
#define MKCCL_COMMON_PLUGWRAP_H

#include <stddef.h>

#include "net/nccl_net.h"

/* Opens `plugin` and finds its ncclNetPlugin_v11. A bare file name is
 * looked for first beside the shared object this code is linked into (the
 * build and install folders keep plugins together), then as dlopen finds
 * it; a path is opened as given. The library stays open for the process's
 * life. On success *net is set; otherwise why (why_len bytes) says what
 * failed and the result is ncclInvalidUsage (no name, or no such symbol) or
 * ncclSystemError (the library cannot be opened). */
ncclResult_t plugwrap_open_net_v11(const char* plugin, const ncclNet_v11_t** net, char* why, size_t why_len);

#endif
