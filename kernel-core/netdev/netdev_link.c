/* Link with the cache in front (netdev_link.h). */
#include <stdlib.h>

#include "base/err.h"
#include "netdev/netdev_link.h"

#ifdef MKCCL_HAVE_NETDEV_LTOIR
extern const char mk_netdev_ltoir[];
extern const char mk_netdev_ltoir_end[];
const void* netdev_core_ltoir(size_t* size) {
  *size = (size_t)(mk_netdev_ltoir_end - mk_netdev_ltoir);
  return mk_netdev_ltoir;
}
#else
const void* netdev_core_ltoir(size_t* size) {
  *size = 0;
  return NULL;
}
#endif

#ifdef MKCCL_HAVE_UNPACK_KERNELS
extern const char mk_cuda_unpack_cubin[];
extern const char mk_cuda_unpack_cubin_end[];
const void* netdev_core_kernels(size_t* size) {
  *size = (size_t)(mk_cuda_unpack_cubin_end - mk_cuda_unpack_cubin);
  return mk_cuda_unpack_cubin;
}
#else
const void* netdev_core_kernels(size_t* size) {
  *size = 0;
  return NULL;
}
#endif

ncclResult_t netdev_link(const netdev_link_input_t* inputs, int n, const char* arch, netdev_link_mode_t mode,
                         void** cubin, size_t* size, netdev_link_source_t* source) {
  int version = 0;
  MK_CHECK(netdev_jitlink_version(&version));
  uint64_t key = netdev_cache_key(inputs, n, arch, mode, version);
  char dir[4096];
  netdev_cache_dir(dir, sizeof(dir));
  if (dir[0] && netdev_cache_load(dir, key, arch, cubin, size) == 0) {
    MK_INFO(NCCL_INIT, "NETDEV: device code for %s from the cache (%s, key %016llx, %zu bytes)", arch, dir,
            (unsigned long long)key, *size);
    *source = NETDEV_LINK_CACHED;
    return ncclSuccess;
  }
  MK_CHECK(netdev_jitlink_run(inputs, n, arch, mode, cubin, size));
  MK_INFO(NCCL_INIT, "NETDEV: device code for %s linked with nvJitLink %d.%d (%zu bytes)%s", arch, version / 1000,
          version % 1000, *size, dir[0] ? ", cached" : "");
  /* A cache that cannot be written costs the next init a link, nothing more. */
  if (dir[0]) (void)netdev_cache_store(dir, key, arch, *cubin, *size);
  *source = NETDEV_LINK_LINKED;
  return ncclSuccess;
}
