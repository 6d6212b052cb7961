#include "plugwrap/plugwrap.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

static void* plugwrap_dlopen(const char* plugin) {
  Dl_info self;
  if (!strchr(plugin, '/') && dladdr((void*)plugwrap_dlopen, &self) && self.dli_fname &&
      strrchr(self.dli_fname, '/')) {
    char path[PATH_MAX];
    int dir = (int)(strrchr(self.dli_fname, '/') - self.dli_fname);
    snprintf(path, sizeof(path), "%.*s/%s", dir, self.dli_fname, plugin);
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib) return lib;
  }
  return dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
}

ncclResult_t plugwrap_open_net_v11(const char* plugin, const ncclNet_v11_t** net, char* why, size_t why_len) {
  if (!plugin || !*plugin) {
    snprintf(why, why_len, "no plugin named to wrap");
    return ncclInvalidUsage;
  }
  void* lib = plugwrap_dlopen(plugin);
  if (!lib) {
    snprintf(why, why_len, "cannot open the wrapped plugin %s: %s", plugin, dlerror());
    return ncclSystemError;
  }
  const ncclNet_v11_t* found = dlsym(lib, NCCL_NET_PLUGIN_SYMBOL_V11);
  if (!found) {
    snprintf(why, why_len, "%s exports no %s", plugin, NCCL_NET_PLUGIN_SYMBOL_V11);
    dlclose(lib);
    return ncclInvalidUsage;
  }
  *net = found;
  return ncclSuccess;
}
