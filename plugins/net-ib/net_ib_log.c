/* The logger handed to init, and the plugin's parameters: declared once
 * here (NCCL's names), read through abi/mkccl_plugin_params.h. */
#include "mkccl_plugin_params.h"
#include "net_ib.h"

ncclDebugLogger_t net_ib_logger = NULL;

static const mkcclParamDecl_v1 net_ib_param_decls[] = {
    {"NCCL_IB_DISABLE", MKCCL_PARAM_INT64, "0", "1: report no devices"},
    {"NCCL_IB_HCA", MKCCL_PARAM_STRING, "",
     "HCAs (and ports) to use: \"mlx5_0:1,mlx5_1\"; ^ excludes, = matches exactly; empty: all"},
    {"NCCL_IB_GID_INDEX", MKCCL_PARAM_INT64, "-1", "RoCE GID index; -1: pick (RoCE v2, IPv4-mapped first)"},
    {"NCCL_IB_ROCE_VERSION_NUM", MKCCL_PARAM_INT64, "2", "RoCE version the GID choice prefers"},
    {"NCCL_IB_TC", MKCCL_PARAM_INT64, "0", "traffic class of RoCE packets (a comm's config overrides it)"},
    {"NCCL_IB_SL", MKCCL_PARAM_INT64, "0", "InfiniBand service level"},
    {"NCCL_IB_TIMEOUT", MKCCL_PARAM_INT64, "20", "QP ack timeout: 4.096 us * 2^value"},
    {"NCCL_IB_RETRY_CNT", MKCCL_PARAM_INT64, "7", "QP retry count"},
    {"NCCL_IB_PKEY", MKCCL_PARAM_INT64, "0", "partition key index"},
    {"NCCL_IB_QPS_PER_CONNECTION", MKCCL_PARAM_INT64, "1", "queue pairs per connection; messages are split over them"},
    {"NCCL_IB_GDR_FLUSH_DISABLE", MKCCL_PARAM_INT64, "0", "1: no RDMA-read flush after GPUDirect receives"},
    {"NCCL_SOCKET_IFNAME", MKCCL_PARAM_STRING, "",
     "interfaces for the connection handshake socket (same syntax as NCCL_IB_HCA)"},
};

static plugin_params_t net_ib_params = {NULL, net_ib_param_decls,
                                        (int)(sizeof(net_ib_param_decls) / sizeof(net_ib_param_decls[0]))};

int64_t net_ib_param_int(const char* name) { return plugin_param_int(&net_ib_params, name); }
const char* net_ib_param_str(const char* name) { return plugin_param_str(&net_ib_params, name); }

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
