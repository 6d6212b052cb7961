/* net-cudacopy's parameters and its log. */
#include <stdarg.h>
#include <stdio.h>

#include "mkccl_plugin_params.h"
#include "net_cudacopy.h"

static const mkcclParamDecl_v1 cudacopy_param_decls[] = {
#define PLUGIN_PARAM PLUGIN_PARAM_DECL
#include "net_cudacopy_params.def"
#undef PLUGIN_PARAM
};

static plugin_params_t cudacopy_params = {NULL, cudacopy_param_decls,
                                          (int)(sizeof(cudacopy_param_decls) / sizeof(cudacopy_param_decls[0]))};
#define PLUGIN_PARAM(name, type, def, help) static inline PLUGIN_PARAM_DEFINE(cudacopy_param_, &cudacopy_params, name, type)
#include "net_cudacopy_params.def"
#undef PLUGIN_PARAM
static ncclDebugLogger_t cudacopy_logger;

const char* cudacopy_param_plugin(void) { return cudacopy_param_MKCCL_NET_CUDACOPY_PLUGIN(); }
int cudacopy_param_force_flush(void) { return cudacopy_param_MKCCL_NET_CUDACOPY_FORCE_FLUSH() != 0; }
int cudacopy_param_dmabuf(void) { return cudacopy_param_MKCCL_NET_CUDACOPY_DMABUF() != 0; }

static void cudacopy_bind(const mkcclServices_v1* services) {
  cudacopy_params.services = services;
  if (services && services->log) cudacopy_logger = services->log;
}

void cudacopy_set_logger(ncclDebugLogger_t logger) {
  if (logger) cudacopy_logger = logger;
}

void cudacopy_log(int level, const char* fmt, ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  if (cudacopy_logger) cudacopy_logger((ncclDebugLogLevel)level, NCCL_NET, __FILE__, __LINE__, "net-cudacopy: %s", text);
  else if (level == NCCL_LOG_WARN) fprintf(stderr, "net-cudacopy: %s\n", text);
}

__attribute__((visibility("default"))) const mkcclPluginInfo_v1_t net_cudacopy_plugin_info __asm__(
    MKCCL_PLUGIN_INFO_SYMBOL) = {
    sizeof(mkcclPluginInfo_v1_t),
    MKCCL_PLUGIN_ABI_VERSION,
    "net-cudacopy",
    "0.1.0",
    cudacopy_param_decls,
    (int)(sizeof(cudacopy_param_decls) / sizeof(cudacopy_param_decls[0])),
    cudacopy_bind,
};
