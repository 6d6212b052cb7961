/* The wrapped plugin: opened by name beside net-cudacopy (the build and
 * install folders keep plugins together), else as given. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "net_cudacopy.h"

const ncclNet_v11_t* cudacopy_inner;

static void* cudacopy_inner_open(const char* plugin) {
  if (!strchr(plugin, '/')) {
    Dl_info self;
    if (dladdr((void*)cudacopy_inner_open, &self) && self.dli_fname && strrchr(self.dli_fname, '/')) {
      char path[PATH_MAX];
      int dir = (int)(strrchr(self.dli_fname, '/') - self.dli_fname);
      snprintf(path, sizeof(path), "%.*s/%s", dir, self.dli_fname, plugin);
      void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (lib) return lib;
    }
  }
  return dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
}

ncclResult_t cudacopy_inner_load(const char* plugin) {
  if (cudacopy_inner) return ncclSuccess;
  if (!plugin || !*plugin) {
    cudacopy_log(NCCL_LOG_WARN, "MKCCL_NET_CUDACOPY_PLUGIN is empty: nothing to wrap");
    return ncclInvalidUsage;
  }
  void* lib = cudacopy_inner_open(plugin);
  if (!lib) {
    cudacopy_log(NCCL_LOG_WARN, "cannot open the wrapped plugin %s: %s", plugin, dlerror());
    return ncclSystemError;
  }
  const ncclNet_v11_t* net = dlsym(lib, "ncclNetPlugin_v11");
  if (!net) {
    cudacopy_log(NCCL_LOG_WARN, "%s exports no ncclNetPlugin_v11", plugin);
    dlclose(lib);
    return ncclInvalidUsage;
  }
  cudacopy_inner = net; /* the library stays open for the process's life */
  return ncclSuccess;
}
