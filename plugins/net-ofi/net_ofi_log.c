/* The logger NCCL or the core hands to init, and the plugin's parameters:
 * declared once here, read through abi/mkccl_plugin_params.h. */
#include "mkccl_plugin_params.h"
#include "net_ofi.h"

ncclDebugLogger_t net_ofi_logger = NULL;

static const mkcclParamDecl_v1 net_ofi_param_decls[] = {
#define PLUGIN_PARAM PLUGIN_PARAM_DECL
#include "net_ofi_params.def"
#undef PLUGIN_PARAM
};

static plugin_params_t net_ofi_params = {NULL, net_ofi_param_decls,
                                         (int)(sizeof(net_ofi_param_decls) / sizeof(net_ofi_param_decls[0]))};

#define PLUGIN_PARAM(name, type, def, help) PLUGIN_PARAM_DEFINE(net_ofi_param_, &net_ofi_params, name, type)
#include "net_ofi_params.def"
#undef PLUGIN_PARAM

int64_t net_ofi_probe_ms = 500, net_ofi_peer_timeout_ms = 10000;

/* Every init reads them again, while comms of an earlier init may be in
 * test() on the proxy thread: atomic, so that read is no race. */
void net_ofi_params_load(void) {
  __atomic_store_n(&net_ofi_probe_ms, net_ofi_param_MKCCL_OFI_PROBE_MS(), __ATOMIC_RELAXED);
  __atomic_store_n(&net_ofi_peer_timeout_ms, net_ofi_param_MKCCL_OFI_PEER_TIMEOUT_MS(), __ATOMIC_RELAXED);
}

static void net_ofi_bind(const mkcclServices_v1* services) { net_ofi_params.services = services; }

__attribute__((visibility("default"))) const mkcclPluginInfo_v1_t mkcclPluginInfo_v1 = {
    sizeof(mkcclPluginInfo_v1_t),
    MKCCL_PLUGIN_ABI_VERSION,
    "net-ofi",
    "0.1.0",
    net_ofi_param_decls,
    (int)(sizeof(net_ofi_param_decls) / sizeof(net_ofi_param_decls[0])),
    net_ofi_bind,
};
