/* Parameter table and mkcclPluginInfo_v1 of transport-net. */
#include "transport_net_params.h"

static const mkcclParamDecl_v1 transport_net_param_decls[] = {
#define PLUGIN_PARAM PLUGIN_PARAM_DECL
#include "transport_net_params.def"
#undef PLUGIN_PARAM
};

#define TRANSPORT_NET_NPARAMS ((int)(sizeof(transport_net_param_decls) / sizeof(transport_net_param_decls[0])))

/* The transport's services answer parameters by name as the plugin services
 * do: a view of them for abi/mkccl_plugin_params.h (which then never reads
 * the environment: the services are there). */
static plugin_params_t transport_net_params_view(const mkcclTransportServices_v1* sv, mkcclServices_v1* view) {
  *view = (mkcclServices_v1){sizeof(*view), sv->log, sv->paramInt64, NULL};
  return (plugin_params_t){view, transport_net_param_decls, TRANSPORT_NET_NPARAMS};
}

#define PLUGIN_PARAM(name, type, def, help)                                                        \
  PLUGIN_PARAM_CTYPE_##type transport_net_param_##name(const mkcclTransportServices_v1* services) { \
    mkcclServices_v1 view;                                                                         \
    plugin_params_t params = transport_net_params_view(services, &view);                          \
    return PLUGIN_PARAM_READ_##type(&params, #name);                                               \
  }
#include "transport_net_params.def"
#undef PLUGIN_PARAM

__attribute__((visibility("default"))) const mkcclPluginInfo_v1_t mkcclPluginInfo_v1 = {
    sizeof(mkcclPluginInfo_v1_t), MKCCL_PLUGIN_ABI_VERSION, "transport-net", "0.1.0", transport_net_param_decls,
    TRANSPORT_NET_NPARAMS, NULL};
