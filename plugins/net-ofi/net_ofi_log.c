/* The logger NCCL or the core hands to init, and the plugin's parameters:
 * declared once here, read through abi/mkccl_plugin_params.h. */
#include "mkccl_plugin_params.h"
#include "net_ofi.h"

ncclDebugLogger_t net_ofi_logger = NULL;

static const mkcclParamDecl_v1 net_ofi_param_decls[] = {
    {"MKCCL_OFI_PROVIDER", MKCCL_PARAM_STRING, "",
     "libfabric provider to use (e.g. \"tcp;ofi_rxm\"); empty: the best one offered. FI_PROVIDER filters too"},
    {"MKCCL_OFI_HMEM", MKCCL_PARAM_INT64, "1", "1: accept CUDA pointers where the provider offers FI_HMEM"},
    {"MKCCL_OFI_PROBE_MS", MKCCL_PARAM_INT64, "500",
     "a request idle this long probes its peer, so a dead peer fails it instead of hanging"},
    {"MKCCL_OFI_PEER_TIMEOUT_MS", MKCCL_PARAM_INT64, "10000",
     "a peer the provider can take no operation for (EAGAIN), or whose probe does not complete, this long is dead"},
    {"MKCCL_OFI_LOOPBACK", MKCCL_PARAM_INT64, "0",
     "1: list loopback domains (lo) as devices even when other domains exist"},
    {"MKCCL_OFI_MR_MODE_ADD", MKCCL_PARAM_INT64, "0",
     "mr_mode bits handled as if the provider asked for them, to run those paths on a provider that needs neither: "
     "FI_MR_LOCAL (4) registers every buffer and passes its descriptor, FI_MR_ENDPOINT (512) binds each region "
     "to the endpoint (tcp refuses that binding: every listen then fails)"},
};

static plugin_params_t net_ofi_params = {NULL, net_ofi_param_decls,
                                         (int)(sizeof(net_ofi_param_decls) / sizeof(net_ofi_param_decls[0]))};

int64_t net_ofi_param_int(const char* name) { return plugin_param_int(&net_ofi_params, name); }
const char* net_ofi_param_str(const char* name) { return plugin_param_str(&net_ofi_params, name); }

int64_t net_ofi_probe_ms = 500, net_ofi_peer_timeout_ms = 10000;

/* Every init reads them again, while comms of an earlier init may be in
 * test() on the proxy thread: atomic, so that read is no race. */
void net_ofi_params_load(void) {
  __atomic_store_n(&net_ofi_probe_ms, net_ofi_param_int("MKCCL_OFI_PROBE_MS"), __ATOMIC_RELAXED);
  __atomic_store_n(&net_ofi_peer_timeout_ms, net_ofi_param_int("MKCCL_OFI_PEER_TIMEOUT_MS"), __ATOMIC_RELAXED);
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
