/* Plain host memory for an engine whose "GPU" is the host: what a kernel
 * would see, a test reaches directly. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "gin/gin_mem.h"

static ncclResult_t host_shared_alloc(void* ctx, size_t bytes, void** host, void** dev) {
  (void)ctx;
  void* p = calloc(1, bytes ? bytes : 1);
  if (!p) return MK_FAIL(ncclSystemError, "GIN: out of memory for %zu bytes", bytes);
  *host = *dev = p;
  return ncclSuccess;
}

static void host_free(void* ctx, void* p) { (void)ctx, free(p); }

static ncclResult_t host_dev_alloc(void* ctx, size_t bytes, void** dev) {
  void* host;
  return host_shared_alloc(ctx, bytes, &host, dev);
}

static ncclResult_t host_copy(void* ctx, void* dst, const void* src, size_t bytes) {
  (void)ctx;
  memcpy(dst, src, bytes);
  return ncclSuccess;
}

void gin_mem_host(gin_mem_ops_t* out) {
  *out = (gin_mem_ops_t){host_shared_alloc, host_free, host_dev_alloc, host_free, host_copy, host_copy, NULL, NULL, NULL};
}
