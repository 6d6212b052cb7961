/* Parameter table and mkcclPluginInfo_v1 of transport-shm. */
#include "transport_shm_params.h"

static const mkcclParamDecl_v1 transport_shm_param_decls[] = {
#define PLUGIN_PARAM PLUGIN_PARAM_DECL
#include "transport_shm_params.def"
#undef PLUGIN_PARAM
};

#define TRANSPORT_SHM_NPARAMS ((int)(sizeof(transport_shm_param_decls) / sizeof(transport_shm_param_decls[0])))

/* The transport's services answer parameters by name as the plugin
 * services do: a view of them for abi/mkccl_plugin_params.h. */
static plugin_params_t transport_shm_params_view(const mkcclTransportServices_v1* sv, mkcclServices_v1* view) {
  *view = (mkcclServices_v1){sizeof(*view), sv->log, sv->paramInt64, NULL};
  return (plugin_params_t){view, transport_shm_param_decls, TRANSPORT_SHM_NPARAMS};
}

#define PLUGIN_PARAM(name, type, def, help)                                                        \
  PLUGIN_PARAM_CTYPE_##type transport_shm_param_##name(const mkcclTransportServices_v1* services) { \
    mkcclServices_v1 view;                                                                         \
    plugin_params_t params = transport_shm_params_view(services, &view);                          \
    return PLUGIN_PARAM_READ_##type(&params, #name);                                               \
  }
#include "transport_shm_params.def"
#undef PLUGIN_PARAM

__attribute__((visibility("default"))) const mkcclPluginInfo_v1_t mkcclPluginInfo_v1 = {
    sizeof(mkcclPluginInfo_v1_t), MKCCL_PLUGIN_ABI_VERSION, "transport-shm", "0.1.0", transport_shm_param_decls,
    TRANSPORT_SHM_NPARAMS, NULL};
