/* Parameter table and mkcclPluginInfo_v1: what mkccl reads before init. */
#include "net_socket_params.h"

#include "mkccl_plugin_params.h"
#include "net_socket_log.h"

static const mkcclParamDecl_v1 net_socket_param_decls[] = {
#define PLUGIN_PARAM PLUGIN_PARAM_DECL
#include "net_socket_params.def"
#undef PLUGIN_PARAM
};

static plugin_params_t net_socket_params = {
    NULL, net_socket_param_decls, (int)(sizeof(net_socket_param_decls) / sizeof(net_socket_param_decls[0]))};

static void net_socket_params_bind(const mkcclServices_v1* services) {
  net_socket_params.services = services;
  if (services && services->log) net_socket_log_set(services->log);
}

#define PLUGIN_PARAM(name, type, def, help) PLUGIN_PARAM_DEFINE(net_socket_param_, &net_socket_params, name, type)
#include "net_socket_params.def"
#undef PLUGIN_PARAM

int net_socket_trace(void) {
  /* Read once: it is asked on every request, by every thread that makes
   * them (the host executors' proxy lanes too), hence atomic. */
  static int trace = -1;
  int t = __atomic_load_n(&trace, __ATOMIC_RELAXED);
  if (t < 0) {
    t = net_socket_param_MKCCL_SOCKET_TRACE() != 0;
    __atomic_store_n(&trace, t, __ATOMIC_RELAXED);
  }
  return t;
}

/* The exported symbol shares its name with the type: an asm label names it. */
__attribute__((visibility("default"))) const mkcclPluginInfo_v1_t net_socket_plugin_info __asm__(
    MKCCL_PLUGIN_INFO_SYMBOL) = {
    sizeof(mkcclPluginInfo_v1_t),
    MKCCL_PLUGIN_ABI_VERSION,
    "net-socket",
    "0.1.0",
    net_socket_param_decls,
    (int)(sizeof(net_socket_param_decls) / sizeof(net_socket_param_decls[0])),
    net_socket_params_bind,
};
