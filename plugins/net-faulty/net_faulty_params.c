/* net-faulty's parameters, read once at init (the hot path keeps a copy). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mkccl_plugin_params.h"
#include "net_faulty.h"

static const mkcclParamDecl_v1 faulty_param_decls[] = {
#define PLUGIN_PARAM PLUGIN_PARAM_DECL
#include "net_faulty_params.def"
#undef PLUGIN_PARAM
};

static plugin_params_t faulty_params = {NULL, faulty_param_decls,
                                        (int)(sizeof(faulty_param_decls) / sizeof(faulty_param_decls[0]))};
#define PLUGIN_PARAM(name, type, def, help) static inline PLUGIN_PARAM_DEFINE(faulty_param_, &faulty_params, name, type)
#include "net_faulty_params.def"
#undef PLUGIN_PARAM
static ncclDebugLogger_t faulty_logger;
faulty_config_t faulty_config;

static void faulty_bind(const mkcclServices_v1* services) {
  faulty_params.services = services;
  if (services && services->log) faulty_logger = services->log;
}

void faulty_log(int level, const char* fmt, ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  if (faulty_logger) faulty_logger((ncclDebugLogLevel)level, NCCL_NET, __FILE__, __LINE__, "net-faulty: %s", text);
  else if (level == NCCL_LOG_WARN) fprintf(stderr, "net-faulty: %s\n", text);
}

static int faulty_lookup(const char* value, const char* const* names, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(value, names[i]) == 0) return i;
  return -1;
}

void faulty_config_read(void) {
  static const char* const modes[] = {"none", "delay", "reorder", "error", "close"};
  static const char* const ops[] = {"isend", "irecv", "test"};
  const char* mode = faulty_param_MKCCL_NET_FAULTY_MODE();
  const char* op = faulty_param_MKCCL_NET_FAULTY_OP();
  int m = faulty_lookup(mode ? mode : "none", modes, 5), o = faulty_lookup(op ? op : "test", ops, 3);
  if (m < 0) faulty_log(NCCL_LOG_WARN, "unknown MKCCL_NET_FAULTY_MODE '%s': no fault", mode);
  if (o < 0) faulty_log(NCCL_LOG_WARN, "unknown MKCCL_NET_FAULTY_OP '%s': counting test", op);
  faulty_config.mode = m < 0 ? FAULTY_NONE : (faulty_mode_t)m;
  faulty_config.op = o < 0 ? FAULTY_OP_TEST : (faulty_op_t)o;
  faulty_config.at = faulty_param_MKCCL_NET_FAULTY_AT();
  faulty_config.delayMs = faulty_param_MKCCL_NET_FAULTY_DELAY_MS();
  faulty_config.plugin = faulty_param_MKCCL_NET_FAULTY_PLUGIN();
  faulty_log(NCCL_LOG_INFO, "mode %s at %s #%lld (delay %lld ms), wrapping %s", modes[faulty_config.mode],
             ops[faulty_config.op], (long long)faulty_config.at, (long long)faulty_config.delayMs,
             faulty_config.plugin ? faulty_config.plugin : "(none)");
}

__attribute__((visibility("default"))) const mkcclPluginInfo_v1_t net_faulty_plugin_info __asm__(
    MKCCL_PLUGIN_INFO_SYMBOL) = {
    sizeof(mkcclPluginInfo_v1_t),
    MKCCL_PLUGIN_ABI_VERSION,
    "net-faulty",
    "0.1.0",
    faulty_param_decls,
    (int)(sizeof(faulty_param_decls) / sizeof(faulty_param_decls[0])),
    faulty_bind,
};
