/* The wrapped plugin (common/plugwrap finds it). */
#include "plugwrap/plugwrap.h"

#include "net_cudacopy.h"

const ncclNet_v11_t* cudacopy_inner;

ncclResult_t cudacopy_inner_load(const char* plugin) {
  if (cudacopy_inner) return ncclSuccess;
  if (!plugin || !*plugin) {
    cudacopy_log(NCCL_LOG_WARN, "MKCCL_NET_CUDACOPY_PLUGIN is empty: nothing to wrap");
    return ncclInvalidUsage;
  }
  char why[512];
  ncclResult_t res = plugwrap_open_net_v11(plugin, &cudacopy_inner, why, sizeof(why));
  if (res != ncclSuccess) cudacopy_log(NCCL_LOG_WARN, "%s", why);
  return res;
}
