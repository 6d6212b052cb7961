/* The logger handed to init, and the plugin's parameters: declared once
 * here (NCCL's names), read through abi/mkccl_plugin_params.h. */
#include "mkccl_plugin_params.h"
#include "net_ib.h"

ncclDebugLogger_t net_ib_logger = NULL;

static const mkcclParamDecl_v1 net_ib_param_decls[] = {
#define PLUGIN_PARAM PLUGIN_PARAM_DECL
#include "net_ib_params.def"
#undef PLUGIN_PARAM
};

static plugin_params_t net_ib_params = {NULL, net_ib_param_decls,
                                        (int)(sizeof(net_ib_param_decls) / sizeof(net_ib_param_decls[0]))};

#define PLUGIN_PARAM(name, type, def, help) PLUGIN_PARAM_DEFINE(net_ib_param_, &net_ib_params, name, type)
#include "net_ib_params.def"
#undef PLUGIN_PARAM

static void net_ib_bind(const mkcclServices_v1* services) { net_ib_params.services = services; }

__attribute__((visibility("default"))) const mkcclPluginInfo_v1_t mkcclPluginInfo_v1 = {
    sizeof(mkcclPluginInfo_v1_t),
    MKCCL_PLUGIN_ABI_VERSION,
    "net-ib",
    "0.1.0",
    net_ib_param_decls,
    (int)(sizeof(net_ib_param_decls) / sizeof(net_ib_param_decls[0])),
    net_ib_bind,
};
