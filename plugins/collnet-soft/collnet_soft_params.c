/* Parameter table, logger and mkcclPluginInfo_v1 of collnet-soft. */
#include "collnet_soft_log.h"

static ncclDebugLogger_t collnet_soft_logger;

void collnet_soft_log_set(ncclDebugLogger_t logger) {
  __atomic_store_n(&collnet_soft_logger, logger, __ATOMIC_RELEASE);
}
ncclDebugLogger_t collnet_soft_log_get(void) { return __atomic_load_n(&collnet_soft_logger, __ATOMIC_ACQUIRE); }

static const mkcclParamDecl_v1 collnet_soft_param_decls[] = {
#define PLUGIN_PARAM PLUGIN_PARAM_DECL
#include "collnet_soft_params.def"
#undef PLUGIN_PARAM
};

static plugin_params_t collnet_soft_params = {
    NULL, collnet_soft_param_decls, (int)(sizeof(collnet_soft_param_decls) / sizeof(collnet_soft_param_decls[0]))};

static void collnet_soft_bind(const mkcclServices_v1* services) {
  collnet_soft_params.services = services;
  if (services && services->log) collnet_soft_log_set(services->log);
}

#define PLUGIN_PARAM(name, type, def, help) \
  PLUGIN_PARAM_DEFINE(collnet_soft_param_, &collnet_soft_params, name, type)
#include "collnet_soft_params.def"
#undef PLUGIN_PARAM

/* The exported symbol shares its name with the type: an asm label names it. */
__attribute__((visibility("default"))) const mkcclPluginInfo_v1_t collnet_soft_plugin_info __asm__(
    MKCCL_PLUGIN_INFO_SYMBOL) = {
    sizeof(mkcclPluginInfo_v1_t),
    MKCCL_PLUGIN_ABI_VERSION,
    "collnet-soft",
    "0.1.0",
    collnet_soft_param_decls,
    (int)(sizeof(collnet_soft_param_decls) / sizeof(collnet_soft_param_decls[0])),
    collnet_soft_bind,
};
