/* The wrapped plugin (common/plugwrap finds it). */
#include "plugwrap/plugwrap.h"

#include "net_faulty.h"

const ncclNet_v11_t* faulty_inner;

ncclResult_t faulty_inner_load(const char* plugin) {
  if (faulty_inner) return ncclSuccess;
  if (!plugin || !*plugin) {
    faulty_log(NCCL_LOG_WARN, "MKCCL_NET_FAULTY_PLUGIN is empty: nothing to wrap");
    return ncclInvalidUsage;
  }
  char why[512];
  ncclResult_t res = plugwrap_open_net_v11(plugin, &faulty_inner, why, sizeof(why));
  if (res != ncclSuccess) faulty_log(NCCL_LOG_WARN, "%s", why);
  return res;
}
